/* The seccomp filter of a sandbox's workloads: a deny list on top of no
 * capabilities, no_new_privs and Landlock. Refused calls fail with EPERM
 * (EAFNOSUPPORT for socket families, ENOSYS for clone3, statmount,
 * listmount and for numbers above the highest the filter knows) so tools
 * print a message; another architecture's calls (i386 via int 0x80, x32)
 * kill the process. Never logs. */
#ifndef CORRAL_SECCOMP_H
#define CORRAL_SECCOMP_H

/* Installs the workload filter on the calling process, which must be the
 * workload itself, single-threaded, right before exec: calls that name a
 * process are allowed only for pid 0 or the caller's own pid. Sets
 * no_new_privs. With LISTENER, every connect() waits for a supervisor
 * (SECCOMP_RET_USER_NOTIF, loaded with NEW_LISTENER and
 * WAIT_KILLABLE_RECV: Linux 5.19) and *LISTENER receives the filter's
 * listener, close-on-exec, for the caller to hand to one (a connect() with
 * no listener left fails with ENOSYS); NULL leaves connect() to the
 * kernel. 0, or -1 with errno (ENOTSUP on an architecture the filter has
 * no system call table for); after a failure the caller must not run the
 * workload, since a part of the filter may be in force. */
int seccomp_apply_workload(int *listener);

/* NULL when the workload filter can be installed here, else what is
 * missing, for `enforcement: full` ("seccomp: ..."). */
const char *seccomp_unavailable(void);

#endif
