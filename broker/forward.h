/* corral forward (PROTOCOL.md, "Port forwarding"): a service listening on
 * a sandbox's loopback, reached from the host.
 *
 * The CLI listens on the host and checks who connects; for each
 * connection it opens a control connection with a ForwardConnect, and
 * once the daemon answers ok that control connection carries the TCP
 * stream's bytes. The daemon dials the sandbox's loopback from a socket
 * the monitor made in the sandbox's network namespace (only for the
 * sandbox's creator or root, by the kernel's word on the connection), and
 * relays. A ForwardOpen names the forward while its command runs, for
 * `corral forward --list`. Every connection leaves inbound records in the
 * ledger. */
#ifndef CORRAL_FORWARD_H
#define CORRAL_FORWARD_H

#include "broker/api.h"

#define FORWARD_LISTEN_MAX_BYTES 256    /* a forward's host side, as named */
#define FORWARD_CONNECT_TIMEOUT_S 5     /* the sandbox's port accepting */

/* ForwardOpen: held while its CLI runs, answered ok. */
void api_forward_open_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* ForwardConnect: ok, then the relay; or an error. */
void api_forward_connect_attach(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, struct bufferevent *bev, struct frame_decoder *frames,
    struct api_slot *slot);
/* ForwardList: the caller's open forwards (root: all). */
int api_forward_list(struct daemon *d, const struct sandbox_caller *caller,
    const Corral__Request *req, Corral__Response *resp);
/* SB is being deleted: its forwards and their connections end now. */
void forward_sandbox_gone(struct sandbox *sb);

#endif
