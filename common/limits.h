/* Numbers that several of corral's processes must agree on: the CLI, the
 * broker, the monitor and corral-init each check them, so each is written
 * once, here. Limits of one module stay in that module's header. */
#ifndef CORRAL_LIMITS_H
#define CORRAL_LIMITS_H

#define CORRAL_ROOTS_MAX 32             /* --root folders of one sandbox */
#define CORRAL_GRANTS_MAX 16            /* --grant names of one sandbox */

/* The ports of a sandbox's gateway (its veth's host end). */
#define GATEWAY_CONNECT_PORT 3128       /* the CONNECT proxy (HTTPS_PROXY) */
#define GATEWAY_TRANSPARENT_PORT 15001  /* the fence redirects every other TCP here */
#define GATEWAY_DNS_PORT 53             /* the DNS stub, UDP and TCP */

#endif
