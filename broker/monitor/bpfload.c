/* Loading and attaching the identification program; see bpfload.h. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "broker/monitor/bpfload.h"
/* identify_bpf_obj[] and unixguard_bpf_obj[]: identify.bpf.c and
 * unixguard.bpf.c compiled for the BPF target, made into arrays at build
 * time (broker/monitor/Makefile.inc). */
#include "broker/monitor/identify.bpf.h"
#include "broker/monitor/unixguard.bpf.h"

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

/* Attaches the program named NAME of OBJ to CGROUP_FD. */
static struct bpf_link *
bpfload_attach_named(struct bpf_object *obj, const char *name, int cgroup_fd)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	if (prog == NULL) {
		errno = ENOENT;
		return NULL;
	}
	return bpf_program__attach_cgroup(prog, cgroup_fd);
}

/* Attaches the program named NAME of B to CGROUP_FD. */
static struct bpf_link *
bpfload_attach_prog(struct bpfload *b, const char *name, int cgroup_fd)
{
	return bpfload_attach_named(b->obj, name, cgroup_fd);
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

/* ---- the Unix socket guard (unixguard.bpf.c) ---- */

#define BPFLOAD_UNIX_CONNECT_NAME "unixguard_connect"
#define BPFLOAD_UNIX_SENDMSG_NAME "unixguard_sendmsg"
#define BPFLOAD_UNIX_SUPERVISORS_MAP "unixguard_supervisors"
#define BPFLOAD_UNIX_PATHS_MAP "unixguard_paths"
/* Attach types of Linux 6.7 (enum bpf_attach_type), newer than the
 * headers libbpf 1.1 was built with. */
#define BPFLOAD_CGROUP_UNIX_CONNECT 49
#define BPFLOAD_CGROUP_UNIX_SENDMSG 50
#define BPFLOAD_UNIX_PATH_KEY_BYTES 128 /* unixguard.bpf.c's key */

/* unixguard.bpf.c's struct unixguard_path_key. */
struct bpfload_unix_key {
	uint64_t cgroup_id;
	char path[BPFLOAD_UNIX_PATH_KEY_BYTES];
};

struct bpfload_unix {
	struct bpf_object *obj;
	int supervisors_fd;
	int paths_fd;
};

struct bpfload_unix_guard {
	struct bpfload_unix *u;
	struct bpf_link *connect;
	struct bpf_link *sendmsg;
	uint64_t cgroup_id;
	bool supervised;                /* the supervisor's entry is in the map */
	struct bpfload_unix_key keys[BPFLOAD_UNIX_PATHS_MAX];
	size_t nkeys;                   /* entries added to the paths map */
};

/* Sets the attach type of program NAME of OBJ. */
static int
bpfload_unix_type(struct bpf_object *obj, const char *name, int type)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	if (prog == NULL) {
		errno = ENOENT;
		return -1;
	}
	return bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)type) == 0 ?
	    0 : -1;
}

/* The descriptor of map NAME of OBJ, or -1 (ENOENT). */
static int
bpfload_map_named(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (map == NULL) {
		errno = ENOENT;
		return -1;
	}
	return bpf_map__fd(map);
}

struct bpfload_unix *
bpfload_unix_open(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "unixguard");
	struct bpfload_unix *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return NULL;
	u->obj = bpf_object__open_mem(unixguard_bpf_obj, sizeof(unixguard_bpf_obj), &opts);
	if (u->obj == NULL ||
	    bpfload_unix_type(u->obj, BPFLOAD_UNIX_CONNECT_NAME,
	    BPFLOAD_CGROUP_UNIX_CONNECT) == -1 ||
	    bpfload_unix_type(u->obj, BPFLOAD_UNIX_SENDMSG_NAME,
	    BPFLOAD_CGROUP_UNIX_SENDMSG) == -1 ||
	    bpf_object__load(u->obj) != 0 ||
	    (u->supervisors_fd = bpfload_map_named(u->obj, BPFLOAD_UNIX_SUPERVISORS_MAP)) == -1 ||
	    (u->paths_fd = bpfload_map_named(u->obj, BPFLOAD_UNIX_PATHS_MAP)) == -1)
		goto fail;
	return u;
fail:
	bpfload_unix_close(u);
	return NULL;
}

void
bpfload_unix_close(struct bpfload_unix *u)
{
	if (u == NULL)
		return;
	bpf_object__close(u->obj);
	free(u);
}

/* Adds PATH to G's listed paths. */
static int
bpfload_unix_list(struct bpfload_unix_guard *g, const char *path)
{
	struct bpfload_unix_key *k = &g->keys[g->nkeys];
	uint8_t one = 1;

	if (strlen(path) >= BPFLOAD_UNIX_LISTED_MAX_BYTES) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(k, 0, sizeof(*k));
	k->cgroup_id = g->cgroup_id;
	memcpy(k->path, path, strlen(path));
	if (bpf_map_update_elem(g->u->paths_fd, k, &one, BPF_NOEXIST) != 0)
		return -1;
	g->nkeys++;
	return 0;
}

struct bpfload_unix_guard *
bpfload_unix_attach(struct bpfload_unix *u, int cgroup_fd, pid_t supervisor,
    const char *const *paths, size_t npaths)
{
	struct bpfload_unix_guard *g;
	struct stat st;
	uint32_t tgid = (uint32_t)supervisor;

	if (cgroup_fd < 0 || fstat(cgroup_fd, &st) == -1 || supervisor <= 0 ||
	    npaths > BPFLOAD_UNIX_PATHS_MAX) {
		errno = cgroup_fd < 0 ? EBADF : EINVAL;
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->u = u;
	/* A cgroup v2 folder's inode number is its id. */
	g->cgroup_id = (uint64_t)st.st_ino;
	/* The maps first: the programs refuse from the moment they attach. */
	if (bpf_map_update_elem(u->supervisors_fd, &g->cgroup_id, &tgid, BPF_NOEXIST) != 0)
		goto fail;
	g->supervised = true;
	for (size_t i = 0; i < npaths; i++)
		if (bpfload_unix_list(g, paths[i]) == -1)
			goto fail;
	g->connect = bpfload_attach_named(u->obj, BPFLOAD_UNIX_CONNECT_NAME, cgroup_fd);
	g->sendmsg = bpfload_attach_named(u->obj, BPFLOAD_UNIX_SENDMSG_NAME, cgroup_fd);
	if (g->connect == NULL || g->sendmsg == NULL)
		goto fail;
	return g;
fail:
	bpfload_unix_detach(g);
	return NULL;
}

void
bpfload_unix_detach(struct bpfload_unix_guard *g)
{
	int saved = errno;

	if (g == NULL)
		return;
	bpf_link__destroy(g->sendmsg);
	bpf_link__destroy(g->connect);
	for (size_t i = 0; i < g->nkeys; i++)
		bpf_map_delete_elem(g->u->paths_fd, &g->keys[i]);
	if (g->supervised)
		bpf_map_delete_elem(g->u->supervisors_fd, &g->cgroup_id);
	free(g);
	errno = saved;
}
