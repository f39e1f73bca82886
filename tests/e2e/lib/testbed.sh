# The end-to-end test bed (tests/e2e/README.md): a fake internet in a
# network namespace of its own, and a test host namespace whose only route
# leads there, so that nothing a test runs, however wrong, can reach the
# real network. Source it from a test (POSIX sh), then:
#
#   tb_need_root              SKIP the whole TAP test unless root
#   tb_install_traps          tb_down on EXIT, INT and TERM
#   tb_up                     build the bed (call it in the test's own shell,
#                             not in $(...): it sets the TB_* variables)
#   tb_exec_host CMD...       run CMD in the test host namespace
#   tb_exec_inet CMD...       run CMD in the fake internet namespace
#   tb_spawn_host NAME CMD... start CMD in the background in the test host
#   tb_spawn_inet NAME CMD... ... or in the fake internet; killed by tb_down
#   tb_pid NAME, tb_log NAME  its pid, and the file holding its output
#   tb_stop NAME              stop it now (TERM, then KILL)
#   tb_wait_listen host|inet PORT [tcp|udp] [TIMEOUT_S]
#   tb_free_port              a TCP port nothing listens on in the test host
#   tb_addr NAME              the address the bed's DNS answers for NAME
#   tb_ca_file                the test CA certificate (PEM)
#   tb_dns_queried NAME [SINCE_LINE]   0 if the DNS server was asked NAME
#   tb_dns_log_lines          lines in the DNS query log now (for SINCE_LINE)
#   tb_http_log               nginx access log path
#   tb_auth_log               nginx log of each request's Authorization header
#                             (/private/ asks Basic credentials of nginx/htpasswd;
#                             /echo-auth answers the header it got)
#   tb_udp_log                what reached the UDP sink (port 9) in the inet
#   tb_down                   remove everything; idempotent
#   tb_reap_stale             remove what crashed earlier runs left behind
#
# See tests/e2e/README.md for the layout, the names and the addresses.

TB_NAMES_FILE=${top_srcdir:-.}/tests/e2e/lib/names.conf
# shellcheck disable=SC2034 # used by the tests (corrald's allow_cidrs)
TB_NET=198.18.0.0/15
TB_INET_ADDR=198.18.0.1      # the fake internet's end of the veth
TB_HOST_ADDR=198.18.0.2      # the test host's end of the veth
TB_DNS_ADDR=198.18.0.53      # dnsmasq, UDP and TCP port 53
TB_INET_IF=tbinet0
TB_HOST_IF=tbhost0
TB_BANNER="SSH-2.0-corral_testbed"
TB_ZEN="Keep it logically awesome."
TB_STOP_WAIT_TENTHS=30       # wait after TERM before KILL, in 0.1 s
TB_LISTEN_WAIT_S=5           # default wait for a listener, in seconds
TB_FREE_PORT_TRIES=50
TB_PORT_MIN=20000
TB_BIG_BYTES=1048576         # size of the /big file every server serves
TB_CERT_DAYS=2

TB_ID=
TB_INET=
TB_HOST=
TB_DIR=
TB_CA=
TB_LAST_PID=

tb_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root"
		exit 0
	fi
}

tb_install_traps() {
	# shellcheck disable=SC2154 # _tb_rc is set by the trap itself
	trap '_tb_rc=$?; tb_down; exit $_tb_rc' EXIT
	trap 'tb_down; trap - EXIT; exit 130' INT
	trap 'tb_down; trap - EXIT; exit 143' TERM
}

# The commands the bed runs; a missing one is an install problem, not a skip.
tb_missing_tools() {
	_tb_missing=
	for _tb_t in ip ss nginx dnsmasq socat openssl curl dig git setsid; do
		command -v "$_tb_t" >/dev/null 2>&1 || _tb_missing="$_tb_missing $_tb_t"
	done
	echo "${_tb_missing# }"
}

# Variables of the machine that would send clients elsewhere (a proxy) or
# make them trust other CAs: commands in the bed run without them, so each
# test says itself which proxy and which CA a client uses.
TB_UNSET_ENV="http_proxy https_proxy ftp_proxy all_proxy no_proxy HTTP_PROXY
	HTTPS_PROXY FTP_PROXY ALL_PROXY NO_PROXY GIT_SSL_CAINFO GIT_SSL_CAPATH
	CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE
	NODE_EXTRA_CA_CERTS PIP_CERT"

_tb_unset_args() { for _tb_v in $TB_UNSET_ENV; do printf ' -u %s' "$_tb_v"; done; }

# _tb_in NS CMD...: CMD in NS without the variables above.
_tb_in() {
	_tb_target=$1; shift
	# shellcheck disable=SC2046
	ip netns exec "$_tb_target" env $(_tb_unset_args) "$@"
}

tb_exec_host() { _tb_in "$TB_HOST" "$@"; }
tb_exec_inet() { _tb_in "$TB_INET" "$@"; }
tb_ca_file() { echo "$TB_CA"; }
tb_http_log() { echo "$TB_DIR/nginx/access.log"; }
tb_auth_log() { echo "$TB_DIR/nginx/auth.log"; }
tb_udp_log() { echo "$TB_DIR/udp-sink.log"; }
tb_pid() { cat "$TB_DIR/pids/$1.pid" 2>/dev/null; }
tb_log() { echo "$TB_DIR/log/$1.log"; }

# tb_addr NAME: the first address names.conf gives NAME (empty if none).
tb_addr() {
	awk -v n="$1" '($1 == "server" || $1 == "record") && $2 == n { print $3; exit }' \
		"$TB_NAMES_FILE"
}

tb_dns_log_lines() { wc -l <"$TB_DIR/dns/queries.log" | tr -d ' '; }

# tb_dns_queried NAME [SINCE_LINE]: did any query for NAME, of any type, reach
# the bed's DNS server (after line SINCE_LINE of its log)? Case-insensitive.
tb_dns_queried() {
	awk -v n="$1" -v since="${2:-0}" '
		NR > since { for (i = 1; i < NF; i++)
			if ($i ~ /^query\[/ && tolower($(i + 1)) == tolower(n)) found = 1 }
		END { exit !found }' "$TB_DIR/dns/queries.log"
}

# _tb_alive PID: running and not a zombie.
_tb_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	_tb_state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$_tb_state" ] && [ "$_tb_state" != Z ]
}

# _tb_signal_group SIG PID: PID was started by setsid, so it leads a process
# group holding its children (nginx workers, socat forks); signal the group
# while PID still leads it, else only PID.
_tb_signal_group() {
	_tb_alive "$2" || return 0
	_tb_pgid=$(sed 's/^.*) //' "/proc/$2/stat" 2>/dev/null | cut -d' ' -f3)
	if [ "$_tb_pgid" = "$2" ]; then
		kill -"$1" -"$2" 2>/dev/null
	else
		kill -"$1" "$2" 2>/dev/null
	fi
	return 0
}

# _tb_reap_pids PID...: TERM, wait (bounded), then KILL what is left.
_tb_reap_pids() {
	[ $# -gt 0 ] || return 0
	for _tb_p in "$@"; do _tb_signal_group TERM "$_tb_p"; done
	_tb_i=0
	while [ "$_tb_i" -lt "$TB_STOP_WAIT_TENTHS" ]; do
		_tb_left=
		for _tb_p in "$@"; do _tb_alive "$_tb_p" && _tb_left=1; done
		[ -z "$_tb_left" ] && return 0
		sleep 0.1
		_tb_i=$((_tb_i + 1))
	done
	for _tb_p in "$@"; do _tb_signal_group KILL "$_tb_p"; done
	return 0
}

# _tb_spawn NS NAME CMD...: start CMD in NS in a session of its own, output
# to tb_log NAME, pid to $TB_DIR/pids/NAME.pid and TB_LAST_PID. Neither
# ip netns exec, env nor setsid forks here, so $! is CMD's pid and group.
_tb_spawn() {
	_tb_ns=$1; _tb_name=$2; shift 2
	[ -n "$TB_DIR" ] || { echo "testbed: no bed is up" >&2; return 1; }
	# A simple command, not a function: the shell forks once and execs it.
	# shellcheck disable=SC2046
	ip netns exec "$_tb_ns" env $(_tb_unset_args) setsid "$@" \
		>"$TB_DIR/log/$_tb_name.log" 2>&1 </dev/null &
	TB_LAST_PID=$!
	echo "$TB_LAST_PID" >"$TB_DIR/pids/$_tb_name.pid"
}

tb_spawn_host() { _tb_spawn "$TB_HOST" "$@"; }
tb_spawn_inet() { _tb_spawn "$TB_INET" "$@"; }

tb_stop() {
	_tb_pidv=$(tb_pid "$1")
	[ -n "$_tb_pidv" ] && _tb_reap_pids "$_tb_pidv"
	rm -f "$TB_DIR/pids/$1.pid"
}

# tb_wait_listen host|inet PORT [tcp|udp] [TIMEOUT_S]: wait until something
# listens on PORT in that namespace; 1 if nothing did in time.
tb_wait_listen() {
	case $1 in host) _tb_ns=$TB_HOST ;; *) _tb_ns=$TB_INET ;; esac
	_tb_flag=-Hltn; [ "${3:-tcp}" = udp ] && _tb_flag=-Hlun
	_tb_tenths=$(( ${4:-$TB_LISTEN_WAIT_S} * 10 ))
	_tb_i=0
	while [ "$_tb_i" -lt "$_tb_tenths" ]; do
		[ -n "$(ip netns exec "$_tb_ns" ss "$_tb_flag" "sport = :$2")" ] && return 0
		sleep 0.1
		_tb_i=$((_tb_i + 1))
	done
	return 1
}

tb_free_port() {
	_tb_i=0
	while [ "$_tb_i" -lt "$TB_FREE_PORT_TRIES" ]; do
		_tb_port=$(( TB_PORT_MIN + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000 ))
		if [ -z "$(tb_exec_host ss -Hltn "sport = :$_tb_port")" ]; then
			echo "$_tb_port"
			return 0
		fi
		_tb_i=$((_tb_i + 1))
	done
	return 1
}

# Names of this bed's kind: ctb<pid>-inet, ctb<pid>-host.
_tb_is_bed_ns() {
	case $1 in ctb*-inet | ctb*-host) ;; *) return 1 ;; esac
	_tb_owner=${1#ctb}; _tb_owner=${_tb_owner%-*}
	case $_tb_owner in '' | *[!0-9]*) return 1 ;; esac
}

# _tb_remove_ns NS: kill whatever runs in it, delete it and its /etc/netns.
_tb_remove_ns() {
	if [ -e "/run/netns/$1" ]; then
		# shellcheck disable=SC2046
		_tb_reap_pids $(ip netns pids "$1" 2>/dev/null)
		ip netns del "$1" 2>/dev/null || umount -l "/run/netns/$1" 2>/dev/null
		rm -f "/run/netns/$1" 2>/dev/null
	fi
	rm -rf "/etc/netns/$1"
	rmdir /etc/netns 2>/dev/null
	return 0
}

# A leftover is stale when the pid in its name is gone (or is ours: a dead
# run of the same pid, since tb_up reaps before making anything).
_tb_owner_gone() {
	[ "$1" = "$$" ] && return 0
	! _tb_alive "$1"
}

tb_reap_stale() {
	for _tb_ns in $(ip netns list 2>/dev/null | cut -d' ' -f1) \
	    $(ls /etc/netns 2>/dev/null); do
		_tb_is_bed_ns "$_tb_ns" || continue
		_tb_owner_gone "$_tb_owner" && _tb_remove_ns "$_tb_ns"
	done
	for _tb_d in /tmp/ctb[0-9]*.*; do
		[ -d "$_tb_d" ] || continue
		_tb_owner=${_tb_d#/tmp/ctb}; _tb_owner=${_tb_owner%%.*}
		case $_tb_owner in '' | *[!0-9]*) continue ;; esac
		_tb_owner_gone "$_tb_owner" && rm -rf "$_tb_d"
	done
	return 0
}

tb_down() {
	[ -n "$TB_ID" ] || return 0
	_tb_all=
	for _tb_f in "$TB_DIR"/pids/*.pid; do
		[ -f "$_tb_f" ] && _tb_all="$_tb_all $(cat "$_tb_f")"
	done
	# shellcheck disable=SC2086
	_tb_reap_pids $_tb_all
	_tb_remove_ns "$TB_HOST"
	_tb_remove_ns "$TB_INET"
	case $TB_DIR in /tmp/ctb[0-9]*.*) rm -rf "$TB_DIR" ;; esac
	TB_ID='' TB_INET='' TB_HOST='' TB_DIR='' TB_CA=''
	return 0
}

_tb_fail() {
	echo "testbed: $*" >&2
	tb_down
	return 1
}

tb_up() {
	[ -z "$TB_ID" ] || { echo "testbed: a bed is already up ($TB_ID)" >&2; return 1; }
	_tb_m=$(tb_missing_tools)
	[ -z "$_tb_m" ] || { echo "testbed: missing tools: $_tb_m" >&2; return 1; }
	[ -r "$TB_NAMES_FILE" ] || { echo "testbed: no $TB_NAMES_FILE" >&2; return 1; }
	tb_reap_stale
	TB_ID=ctb$$
	TB_INET=$TB_ID-inet
	TB_HOST=$TB_ID-host
	TB_DIR=$(mktemp -d "/tmp/$TB_ID.XXXXXX") || { TB_ID=; return 1; }
	TB_CA=$TB_DIR/pki/ca.pem
	mkdir -p "$TB_DIR/pids" "$TB_DIR/log" "$TB_DIR/pki" "$TB_DIR/dns" \
		"$TB_DIR/nginx/tmp" "$TB_DIR/www" || { _tb_fail "cannot fill $TB_DIR"; return 1; }
	_tb_up_net || { _tb_fail "network setup failed"; return 1; }
	_tb_up_pki || { _tb_fail "certificate generation failed"; return 1; }
	_tb_up_www || { _tb_fail "web content setup failed"; return 1; }
	_tb_up_dns || { _tb_fail "dnsmasq did not start: $(cat "$(tb_log dns)")"; return 1; }
	_tb_up_nginx || { _tb_fail "nginx did not start: $(cat "$(tb_log nginx)")"; return 1; }
	_tb_up_tcp || { _tb_fail "socat services did not start"; return 1; }
	return 0
}

_tb_server_addrs() { awk '$1 == "server" { print $3 }' "$TB_NAMES_FILE" | sort -u; }

# Two namespaces joined by a veth made inside them (never in the machine's
# own namespace). The host's address is a /15, so its one route is the
# on-link 198.18.0.0/15 (the inet answers ARP for every address on its
# loopback); no default route, so anything else is "network unreachable" at
# once. IPv6 is off on the veth, so no link-local route appears either.
_tb_up_net() {
	ip netns add "$TB_INET" && ip netns add "$TB_HOST" || return 1
	tb_exec_inet ip link set lo up && tb_exec_host ip link set lo up || return 1
	ip -n "$TB_INET" link add "$TB_INET_IF" type veth peer name "$TB_HOST_IF" \
		netns "$TB_HOST" || return 1
	if [ -d /proc/sys/net/ipv6 ]; then
		tb_exec_inet sysctl -qw "net.ipv6.conf.$TB_INET_IF.disable_ipv6=1" &&
		tb_exec_host sysctl -qw "net.ipv6.conf.$TB_HOST_IF.disable_ipv6=1" || return 1
	fi
	ip -n "$TB_INET" addr add "$TB_INET_ADDR/30" dev "$TB_INET_IF" &&
	ip -n "$TB_HOST" addr add "$TB_HOST_ADDR/15" dev "$TB_HOST_IF" &&
	ip -n "$TB_INET" link set "$TB_INET_IF" up &&
	ip -n "$TB_HOST" link set "$TB_HOST_IF" up &&
	ip -n "$TB_INET" addr add "$TB_DNS_ADDR/32" dev lo || return 1
	for _tb_a in $(_tb_server_addrs); do
		ip -n "$TB_INET" addr add "$_tb_a/32" dev lo || return 1
	done
	# ip netns exec bind-mounts this over /etc/resolv.conf in the host ns.
	mkdir -p "/etc/netns/$TB_HOST" &&
	echo "nameserver $TB_DNS_ADDR" >"/etc/netns/$TB_HOST/resolv.conf"
}

# A test CA and one server certificate naming every server of names.conf.
# The certificates are readable by anyone (sandboxed clients need the CA);
# the keys only by root.
_tb_up_pki() {
	_tb_pki=$TB_DIR/pki
	_tb_sans=$(awk '$1 == "server" { printf "%sDNS:%s", sep, $2; sep = "," }' "$TB_NAMES_FILE")
	printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' \
		"$_tb_sans" >"$_tb_pki/server.ext"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$_tb_pki/ca.key" -out "$_tb_pki/ca.pem" -days "$TB_CERT_DAYS" \
		-subj "/CN=corral test bed CA $TB_ID" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" >/dev/null 2>&1 &&
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$_tb_pki/server.key" -out "$_tb_pki/server.csr" \
		-subj "/CN=github.com" >/dev/null 2>&1 &&
	openssl x509 -req -in "$_tb_pki/server.csr" -CA "$_tb_pki/ca.pem" \
		-CAkey "$_tb_pki/ca.key" -CAcreateserial -days "$TB_CERT_DAYS" \
		-extfile "$_tb_pki/server.ext" -out "$_tb_pki/server.pem" >/dev/null 2>&1 &&
	chmod 600 "$_tb_pki/ca.key" "$_tb_pki/server.key" &&
	chmod 644 "$_tb_pki/ca.pem" "$_tb_pki/server.pem"
}

# Static files every server serves: /big, and a git repository for the dumb
# HTTP protocol at /tb/repo.git (clone only; no fcgiwrap needed).
_tb_up_www() {
	chmod 755 "$TB_DIR" "$TB_DIR/www" || return 1
	head -c "$TB_BIG_BYTES" /dev/zero >"$TB_DIR/www/big" || return 1
	_tb_src=$TB_DIR/git-src
	mkdir -p "$_tb_src" "$TB_DIR/www/tb" &&
	git -C "$_tb_src" init -q -b main &&
	echo "corral test bed repository" >"$_tb_src/README" &&
	git -C "$_tb_src" add README &&
	git -C "$_tb_src" -c user.name=testbed -c user.email=testbed@example.com \
		commit -q -m "test bed" &&
	git clone -q --bare "$_tb_src" "$TB_DIR/www/tb/repo.git" &&
	git -C "$TB_DIR/www/tb/repo.git" update-server-info &&
	chmod -R a+rX "$TB_DIR/www"
}

_tb_up_dns() {
	_tb_conf=$TB_DIR/dns/dnsmasq.conf
	{
		echo "no-resolv"
		echo "no-hosts"
		echo "no-poll"
		# Bound to the address, whatever interface a query comes in by.
		echo "bind-interfaces"
		echo "listen-address=$TB_DNS_ADDR"
		echo "port=53"
		echo "user=root"
		echo "pid-file="
		echo "log-queries"
		echo "log-facility=$TB_DIR/dns/queries.log"
		# Any name not listed: NXDOMAIN, never a forward.
		echo "address=/#/"
		awk '$1 == "server" || $1 == "record" { print "host-record=" $2 "," $3 }
		     $1 == "txt" { n = $2; $1 = ""; $2 = ""; sub(/^ +/, "");
		                   print "txt-record=" n ",\"" $0 "\"" }' "$TB_NAMES_FILE"
	} >"$_tb_conf" || return 1
	: >"$TB_DIR/dns/queries.log"
	tb_spawn_inet dns dnsmasq --keep-in-foreground --conf-file="$_tb_conf" || return 1
	tb_wait_listen inet 53 udp && tb_wait_listen inet 53 tcp
}

_tb_up_nginx() {
	_tb_n=$TB_DIR/nginx
	cat >"$_tb_n/nginx.conf" <<EOF || return 1
worker_processes 1;
user nobody nogroup;
pid $_tb_n/nginx.pid;
error_log $_tb_n/error.log;
events { worker_connections 256; }
http {
	log_format tb '\$server_addr:\$server_port \$scheme \$host "\$request" \$status \$body_bytes_sent';
	access_log $_tb_n/access.log tb;
	log_format tbauth '\$host "\$request" \$status auth=[\$http_authorization]';
	access_log $_tb_n/auth.log tbauth;
	client_body_temp_path $_tb_n/tmp/body;
	proxy_temp_path $_tb_n/tmp/proxy;
	fastcgi_temp_path $_tb_n/tmp/fastcgi;
	uwsgi_temp_path $_tb_n/tmp/uwsgi;
	scgi_temp_path $_tb_n/tmp/scgi;
	default_type text/plain;
	server {
		listen 80 default_server;
		listen 443 ssl http2 default_server;
		server_name _;
		ssl_certificate $TB_DIR/pki/server.pem;
		ssl_certificate_key $TB_DIR/pki/server.key;
		root $TB_DIR/www;
		location = / { return 200 "hello from \$host\n"; }
		location = /zen { return 200 "$TB_ZEN\n"; }
		location = /echo { return 200 "\$request_method \$request_uri host=\$host scheme=\$scheme\n"; }
		location = /echo-auth { return 200 "auth=\$http_authorization\n"; }
		location /private/ {
			auth_basic "corral test bed";
			auth_basic_user_file $_tb_n/htpasswd;
			try_files \$uri =404;
		}
		location / { try_files \$uri =404; }
	}
}
EOF
	tb_spawn_inet nginx nginx -p "$_tb_n" -e "$_tb_n/error.log" -c "$_tb_n/nginx.conf" \
		-g 'daemon off;' || return 1
	tb_wait_listen inet 443 && tb_wait_listen inet 80
}

# A server-speaks-first service on 2222 (an SSH-like banner, then echo), a
# TCP echo on 7, and a UDP sink on 9 recording what reaches the internet.
_tb_up_tcp() {
	printf '#!/bin/sh\nprintf "%%s\\r\\n" "%s"\nexec cat\n' "$TB_BANNER" \
		>"$TB_DIR/banner.sh" || return 1
	tb_spawn_inet banner socat TCP-LISTEN:2222,fork,reuseaddr \
		EXEC:"/bin/sh $TB_DIR/banner.sh" || return 1
	tb_spawn_inet echo socat TCP-LISTEN:7,fork,reuseaddr EXEC:cat || return 1
	tb_spawn_inet udp-sink socat -u UDP-RECV:9 "OPEN:$TB_DIR/udp-sink.log,creat,append" ||
		return 1
	tb_wait_listen inet 2222 && tb_wait_listen inet 7 && tb_wait_listen inet 9 udp
}
