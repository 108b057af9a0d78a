# netproxy/: agentrun-netproxy and agentrun-relay. common (+ spec for
# state.json, yajl for --config). Never the container library.
noinst_LIBRARIES += libnetproxy.a
libnetproxy_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS) $(SECCOMP_CFLAGS)
libnetproxy_a_CPPFLAGS = $(AM_CPPFLAGS) $(NETPROXY_INC)
libnetproxy_a_SOURCES = \
	netproxy/ev.c netproxy/ev.h \
	netproxy/splice.c netproxy/splice.h \
	netproxy/routes.c netproxy/routes.h \
	netproxy/audit.c netproxy/audit.h \
	netproxy/dns.c netproxy/dns.h \
	netproxy/sni.c netproxy/sni.h \
	netproxy/resolve.c netproxy/resolve.h \
	netproxy/handoff.c netproxy/handoff.h \
	netproxy/optlist.c netproxy/optlist.h \
	netproxy/confine.c netproxy/confine.h

NETPROXY_LIBS = libnetproxy.a libarspec.a libarcommon.a $(YAJL_LIBS) $(SECCOMP_LIBS) -lpthread

bin_PROGRAMS += agentrun-relay agentrun-netproxy
agentrun_relay_SOURCES = netproxy/relay.c
agentrun_relay_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
agentrun_relay_CPPFLAGS = $(AM_CPPFLAGS) $(NETPROXY_INC)
agentrun_relay_LDADD = $(NETPROXY_LIBS)

agentrun_netproxy_SOURCES = netproxy/netproxy.c netproxy/server.c netproxy/server.h netproxy/ask.c netproxy/ask.h
agentrun_netproxy_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
agentrun_netproxy_CPPFLAGS = $(AM_CPPFLAGS) $(NETPROXY_INC)
agentrun_netproxy_LDADD = $(NETPROXY_LIBS)
