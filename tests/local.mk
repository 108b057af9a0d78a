# tests/: bats suites (one per area), fuzz targets, benchmarks.
TESTS_BATS = $(if $(CHECK_SUITES),$(patsubst %,$(srcdir)/tests/%.bats,$(CHECK_SUITES)),$(sort $(wildcard $(srcdir)/tests/*.bats)))
# The folder as it is in the source tree, less what a build (in or out of
# the source tree) and a test run leave in it.
EXTRA_DIST += tests
dist-hook: dist-prune-tests
dist-prune-tests:
	cd $(distdir)/tests && rm -rf fuzz/run-* \
	  $(patsubst tests/%,%,$(noinst_PROGRAMS) $(check_PROGRAMS) $(FUZZ_TARGETS)) && \
	find . \( -name .deps -prune -o -name '*.o' -o -name .dirstamp -o -name '*.log' -o -name '*.trs' -o -name '*.bpf' \
	  -o -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -exec rm -rf {} +
.PHONY: dist-prune-tests
check-local: all
	AGENTRUN_BUILDDIR=$(abs_builddir) AGENTRUN_SRCDIR=$(abs_srcdir) \
	  $(srcdir)/tests/run-bats $(BATS_FLAGS) $(TESTS_BATS)
# The seccomp notify agent tests/seccomp.bats runs (built by `make`, not installed).
noinst_PROGRAMS += tests/seccomp-notify-agent
tests_seccomp_notify_agent_SOURCES = tests/seccomp-notify-agent.c
# Static: it also runs inside busybox containers as a syscall probe.
tests_seccomp_notify_agent_LDFLAGS = -static -pthread
tests_seccomp_notify_agent_CFLAGS = -Wall -Wextra -Werror -std=gnu11 -O2 -g -pthread   # no sanitizers: static
# The unixconn supervisor's probe tests/unixconn.bats runs inside sandboxes (static too).
noinst_PROGRAMS += tests/unixconn-probe
tests_unixconn_probe_SOURCES = tests/unixconn-probe.c
tests_unixconn_probe_LDFLAGS = -static -pthread
tests_unixconn_probe_CFLAGS = -Wall -Wextra -Werror -std=gnu11 -O2 -g -pthread

# libFuzzer targets (`make fuzz`, `make fuzz-smoke FUZZ_SECONDS=60`), built
# with clang straight from the sources, not from the gcc-built libraries.
FUZZ_SECONDS = 60
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_builddir) $(RUNTIME_INC) -iquote $(top_srcdir)/netproxy $(YAJL_CFLAGS)
FUZZ_SPEC_SRCS = $(addprefix $(srcdir)/common/,error.c strio.c clock.c) \
	$(addprefix $(srcdir)/spec/,json.c jsontree.c names.c parse.c parse_linux.c \
	parse_resources.c free.c validate.c validate_linux.c state.c jsongen.c)
# Targets of other folders are wired when their sources exist.
FUZZ_TARGETS = tests/fuzz/fuzz_config \
	$(if $(wildcard $(srcdir)/tests/fuzz/fuzz_dns.c),$(if $(wildcard $(srcdir)/netproxy/dns.c),tests/fuzz/fuzz_dns)) \
	$(if $(wildcard $(srcdir)/tests/fuzz/fuzz_sni.c),$(if $(wildcard $(srcdir)/netproxy/sni.c),tests/fuzz/fuzz_sni))
CLEANFILES += tests/fuzz/fuzz_config tests/fuzz/fuzz_dns tests/fuzz/fuzz_sni
# The seccomp section through ar_seccomp_compile (never loaded) and netproxy routes: both parse untrusted config.
FUZZ_TARGETS += tests/fuzz/fuzz_seccomp tests/fuzz/fuzz_routes
CLEANFILES += tests/fuzz/fuzz_seccomp tests/fuzz/fuzz_routes
FUZZ_SECCOMP_SRCS = $(addprefix $(srcdir)/runtime/,seccomp.c seccomp_names.c seccomp_enosys.c seccomp_cache.c) \
	$(addprefix $(srcdir)/common/,sha256.c log.c)
# The D-Bus message parser of the systemd cgroup manager: it reads what the bus sends.
FUZZ_TARGETS += tests/fuzz/fuzz_dbus
CLEANFILES += tests/fuzz/fuzz_dbus
.PHONY: fuzz fuzz-smoke

if HAVE_CLANG
tests/fuzz/fuzz_config: $(srcdir)/tests/fuzz/fuzz_config.c $(FUZZ_SPEC_SRCS) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_config.c $(FUZZ_SPEC_SRCS) $(YAJL_LIBS)
tests/fuzz/fuzz_dns: $(srcdir)/tests/fuzz/fuzz_dns.c $(srcdir)/netproxy/dns.c config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_dns.c $(srcdir)/netproxy/dns.c
tests/fuzz/fuzz_sni: $(srcdir)/tests/fuzz/fuzz_sni.c $(srcdir)/netproxy/sni.c config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_sni.c $(srcdir)/netproxy/sni.c
tests/fuzz/fuzz_seccomp: $(srcdir)/tests/fuzz/fuzz_seccomp.c $(FUZZ_SECCOMP_SRCS) $(FUZZ_SPEC_SRCS) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_seccomp.c \
	  $(FUZZ_SECCOMP_SRCS) $(FUZZ_SPEC_SRCS) $(SECCOMP_LIBS) $(YAJL_LIBS)
FUZZ_ROUTES_SRCS = $(srcdir)/netproxy/routes.c $(srcdir)/spec/jsontree.c $(addprefix $(srcdir)/common/,error.c hostname.c strio.c)
tests/fuzz/fuzz_routes: $(srcdir)/tests/fuzz/fuzz_routes.c $(FUZZ_ROUTES_SRCS) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_routes.c $(FUZZ_ROUTES_SRCS) $(YAJL_LIBS)
tests/fuzz/fuzz_dbus: $(srcdir)/tests/fuzz/fuzz_dbus.c $(srcdir)/runtime/cgroups/dbus_wire.c $(srcdir)/common/error.c config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_dbus.c $(srcdir)/runtime/cgroups/dbus_wire.c \
	  $(srcdir)/common/error.c
fuzz: $(FUZZ_TARGETS)
# Each target runs FUZZ_SECONDS on a scratch copy of its seed corpus (the
# committed seeds stay as they are); a crash stops make with its reproducer.
# The seccomp target unwinds slowly on every malloc (its leak suppressions
# match libseccomp's frames), and libseccomp compiles a rule with many
# conditions on one argument over hundreds of syscalls in seconds under
# ASan (a 7 KB profile: 7.7 s, 14 s with that unwinding): it gets 40 s per
# input, the others 10.
fuzz-smoke: fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
	  name=$${t##*/fuzz_}; work=tests/fuzz/run-$$name; rm -rf $$work; mkdir -p $$work/corpus; \
	  if [ -d $(srcdir)/tests/fuzz/corpus/$$name ]; then cp -R $(srcdir)/tests/fuzz/corpus/$$name/. $$work/corpus/; fi; \
	  echo "fuzz $$name for $(FUZZ_SECONDS)s"; \
	  opts= tmo=10; if [ $$name = seccomp ]; then \
	    opts="ASAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=10 LSAN_OPTIONS=suppressions=$(srcdir)/tests/fuzz/lsan-seccomp.supp" tmo=40; fi; \
	  env $$opts ./$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=$$tmo -rss_limit_mb=2048 \
	    -artifact_prefix=$$work/ -print_final_stats=1 $$work/corpus 2>$$work/log || { tail -n 40 $$work/log >&2; \
	    for a in $$work/crash-* $$work/leak-* $$work/timeout-* $$work/oom-*; do \
	      [ -f "$$a" ] && { echo "reproducer $$a (base64):" >&2; head -c 4096 "$$a" | base64 >&2; }; done; exit 1; }; \
	  grep -E '^(stat::number_of_executed_units|Done)' $$work/log || true; \
	done
else
fuzz fuzz-smoke:
	@echo "fuzz targets need clang (not found by configure)"; exit 1
endif

# `make bench` runs agentrun side by side with crun, runc, bubblewrap,
# netproxy and podman; writes tests/bench/results.md and results.png.
.PHONY: bench
bench: all
	AGENTRUN_BUILDDIR=$(abs_builddir) AGENTRUN_SRCDIR=$(abs_srcdir) $(SHELL) $(srcdir)/tests/bench/run.sh
# The agent profile's compiled program for bwrap --seccomp (tests/bench/sandbox-start.sh).
noinst_PROGRAMS += tests/bench/seccomp-export
tests_bench_seccomp_export_SOURCES = tests/bench/seccomp-export.c
tests_bench_seccomp_export_CPPFLAGS = $(AM_CPPFLAGS) $(RUNTIME_INC)
tests_bench_seccomp_export_LDADD = $(AGENTRUN_LIBS)
