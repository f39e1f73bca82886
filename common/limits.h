/* Numbers that several of corral's processes must agree on: the CLI, the
 * broker, the monitor and corral-init each check them, so each is written
 * once, here. Limits of one module stay in that module's header. */
#ifndef CORRAL_LIMITS_H
#define CORRAL_LIMITS_H

#define CORRAL_ROOTS_MAX 32             /* --root folders of one sandbox */
#define CORRAL_GRANTS_MAX 16            /* --grant names of one sandbox */

/* The ports of a sandbox's gateway (its veth's host end). What the
 * monitor binds is below 1024, so that no user but root can bind it
 * first (with IP_FREEBIND, anyone may bind an address not yet there) and
 * keep a sandbox from being made; the fence sends the CONNECT port there. */
#define GATEWAY_CONNECT_PORT 3128       /* the CONNECT proxy (HTTPS_PROXY), as sandboxes see it */
#define GATEWAY_CONNECT_LISTEN_PORT 1001        /* ... where it listens */
#define GATEWAY_TRANSPARENT_PORT 1002   /* the fence redirects every other TCP here */
#define GATEWAY_DNS_PORT 53             /* the DNS stub, UDP and TCP */

#endif
