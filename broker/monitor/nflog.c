/* Binds a netfilter netlink socket to an NFLOG group (nfnetlink_log's
 * NFULNL_MSG_CONFIG: BIND, then the copy mode), each request acknowledged
 * before the next. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "broker/monitor/nflog.h"
#include "common/reason.h"

#define NFLOG_CONFIG_BUFFER_BYTES 4096        /* one request, or its ack */

/* One config request for GROUP with attribute TYPE of LEN bytes at DATA,
 * sent on FD and its ack read; 0, or -1 with errno. */
static int
nflog_config(int fd, uint16_t group, uint16_t type, const void *data, size_t len)
{
	char buf[NFLOG_CONFIG_BUFFER_BYTES] = { 0 };      /* the padding the kernel reads too */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;
	ssize_t n;
	int rc;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	mnl_attr_put(nlh, type, len, data);
	if (send(fd, nlh, nlh->nlmsg_len, 0) == -1)
		return -1;
	do {
		n = recv(fd, buf, sizeof(buf), 0);
	} while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	/* The ack: an error message whose code is 0 on success. */
	rc = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, 0, NULL, NULL);
	return rc == -1 ? -1 : 0;
}

int
nflog_open(uint16_t group, char **err)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfulnl_msg_config_cmd bind_cmd = { .command = NFULNL_CFG_CMD_BIND };
	struct nfulnl_msg_config_mode mode = { .copy_range = htonl(NFLOG_COPY_BYTES),
	    .copy_mode = NFULNL_COPY_PACKET };
	uint32_t one = htonl(1);
	int fd, size = NFLOG_RCVBUF_BYTES, saved;
	const char *step = "socket";

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd == -1)
		goto fail;
	step = "bind";
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		goto fail;
	step = "binding the group";
	if (nflog_config(fd, group, NFULA_CFG_CMD, &bind_cmd, sizeof(bind_cmd)) == -1)
		goto fail;
	step = "setting the copy mode";
	if (nflog_config(fd, group, NFULA_CFG_MODE, &mode, sizeof(mode)) == -1)
		goto fail;
	/* Each packet at once, not in batches of 100 or after a second (the
	 * kernel's defaults): a refusal is in the denials right away. */
	step = "setting the queue threshold";
	if (nflog_config(fd, group, NFULA_CFG_QTHRESH, &one, sizeof(one)) == -1)
		goto fail;
	/* Past the default: a burst from many sandboxes at once. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	step = "O_NONBLOCK";
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	reason_set(err, "NFLOG group %u: %s: %s", (unsigned int)group, step, strerror(saved));
	if (fd != -1)
		close(fd);
	errno = saved;
	return -1;
}
