# tests/unit/: TAP programs for the pure functions, run without root by
# `make unit` (and by `make check`, before the bats suites). They link the
# in-tree libraries, so they test the very objects the binaries are made of.
UNIT_TESTS = tests/unit/test_spec tests/unit/test_runtime tests/unit/test_sandbox tests/unit/test_routes
check_PROGRAMS += $(UNIT_TESTS)
EXTRA_DIST += tests/unit/run

tests_unit_test_spec_SOURCES = tests/unit/test_spec.c tests/unit/tap.h
tests_unit_test_spec_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
tests_unit_test_spec_CPPFLAGS = $(AM_CPPFLAGS) $(SANDBOX_INC)
tests_unit_test_spec_LDADD = libarsandbox.a libarspec.a libarcommon.a $(YAJL_LIBS)

tests_unit_test_runtime_SOURCES = tests/unit/test_runtime.c tests/unit/tap.h
tests_unit_test_runtime_CFLAGS = $(libagentrun_a_CFLAGS)
tests_unit_test_runtime_CPPFLAGS = $(AM_CPPFLAGS) $(RUNTIME_INC)
tests_unit_test_runtime_LDADD = $(AGENTRUN_LIBS)

tests_unit_test_sandbox_SOURCES = tests/unit/test_sandbox.c tests/unit/tap.h
tests_unit_test_sandbox_CFLAGS = $(libagentrun_a_CFLAGS)
tests_unit_test_sandbox_CPPFLAGS = $(AM_CPPFLAGS) $(SANDBOX_INC)
tests_unit_test_sandbox_LDADD = $(SANDBOX_LIBS)

tests_unit_test_routes_SOURCES = tests/unit/test_routes.c tests/unit/tap.h
tests_unit_test_routes_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
# the endpoint syntax of --allow (sandbox/agent.c) beside the netproxy's routes
tests_unit_test_routes_CPPFLAGS = $(AM_CPPFLAGS) $(NETPROXY_INC) -iquote $(top_srcdir)/sandbox
tests_unit_test_routes_LDADD = libarsandbox.a $(NETPROXY_LIBS)

# The layers' arrows (tests/unit/layers.sh) over the sources and the built
# libraries and netproxy programs, and over bad copies of them.
UNIT_CHECKS = tests/unit/test_layers
CLEANFILES += $(UNIT_CHECKS)
EXTRA_DIST += tests/unit/layers.sh tests/unit/test_layers.sh
tests/unit/test_layers: $(srcdir)/tests/unit/test_layers.sh $(srcdir)/tests/unit/layers.sh $(noinst_LIBRARIES) $(bin_PROGRAMS)
	@mkdir -p tests/unit
	$(AM_V_GEN){ echo '#!/bin/sh'; \
	  echo 'CC="$(CC)" AR="$(AR)" exec $(SHELL) "$(abs_srcdir)/tests/unit/test_layers.sh" "$(abs_srcdir)" "$(abs_builddir)"'; } >$@.tmp && \
	  chmod +x $@.tmp && mv $@.tmp $@

.PHONY: unit
unit: $(UNIT_TESTS) $(UNIT_CHECKS)
	$(SHELL) $(srcdir)/tests/unit/run $(UNIT_TESTS) $(UNIT_CHECKS)
check-local: unit
# tests/ goes into the tarball whole (tests/local.mk): not this build's
# dependency files (the programs themselves are pruned as check_PROGRAMS).
dist-hook: dist-prune-unit
dist-prune-unit:
	rm -rf $(distdir)/tests/unit/.deps $(addprefix $(distdir)/,$(UNIT_CHECKS))
.PHONY: dist-prune-unit
