# tests/: bats suites (one per area), fuzz targets, benchmarks.
TESTS_BATS = $(sort $(wildcard $(srcdir)/tests/*.bats))
EXTRA_DIST += tests
check-local: all
	AGENTRUN_BUILDDIR=$(abs_builddir) AGENTRUN_SRCDIR=$(abs_srcdir) \
	  bats $(BATS_FLAGS) $(TESTS_BATS)
