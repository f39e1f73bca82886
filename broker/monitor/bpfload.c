/* Loading and attaching the identification program; see bpfload.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "broker/monitor/bpfload.h"
/* identify_bpf_obj[]: identify.bpf.c compiled for the BPF target, made into
 * an array at build time (broker/monitor/Makefile.inc). */
#include "broker/monitor/identify.bpf.h"

#define BPFLOAD_MAP_NAME "identify_owners"
#define BPFLOAD_PROG4_NAME "identify_connect4"
#define BPFLOAD_PROG6_NAME "identify_connect6"

struct bpfload {
	struct bpf_object *obj;
	int map_fd;
};

struct bpfload_attachment {
	struct bpf_link *link4;
	struct bpf_link *link6;
};

struct bpfload *
bpfload_open(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "identify");
	struct bpfload *b = calloc(1, sizeof(*b));
	struct bpf_map *map;

	if (b == NULL)
		return NULL;
	b->obj = bpf_object__open_mem(identify_bpf_obj, sizeof(identify_bpf_obj), &opts);
	if (b->obj == NULL || bpf_object__load(b->obj) != 0)
		goto fail;
	if ((map = bpf_object__find_map_by_name(b->obj, BPFLOAD_MAP_NAME)) == NULL) {
		errno = ENOENT;
		goto fail;
	}
	b->map_fd = bpf_map__fd(map);
	return b;
fail:
	bpfload_close(b);
	return NULL;
}

int
bpfload_map_fd(const struct bpfload *b)
{
	return b->map_fd;
}

void
bpfload_close(struct bpfload *b)
{
	if (b == NULL)
		return;
	bpf_object__close(b->obj);
	free(b);
}

/* Attaches the program named NAME of B to CGROUP_FD. */
static struct bpf_link *
bpfload_attach_prog(struct bpfload *b, const char *name, int cgroup_fd)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(b->obj, name);

	if (prog == NULL) {
		errno = ENOENT;
		return NULL;
	}
	return bpf_program__attach_cgroup(prog, cgroup_fd);
}

struct bpfload_attachment *
bpfload_attach(struct bpfload *b, int cgroup_fd)
{
	struct bpfload_attachment *a;

	if (cgroup_fd < 0) {
		errno = EBADF;
		return NULL;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->link4 = bpfload_attach_prog(b, BPFLOAD_PROG4_NAME, cgroup_fd);
	a->link6 = bpfload_attach_prog(b, BPFLOAD_PROG6_NAME, cgroup_fd);
	if (a->link4 == NULL || a->link6 == NULL) {
		bpfload_detach(a);
		return NULL;
	}
	return a;
}

void
bpfload_detach(struct bpfload_attachment *a)
{
	if (a == NULL)
		return;
	/* Destroying a link detaches the program from the cgroup. */
	bpf_link__destroy(a->link6);
	bpf_link__destroy(a->link4);
	free(a);
}
