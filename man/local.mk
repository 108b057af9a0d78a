# man/: the man pages, one scdoc source each, built with this configure's
# version and paths (so they are not shipped prebuilt: scdoc is a build dep).
MAN_SCD = man/agentrun.1.scd man/agentrun-sandbox.1.scd man/agentrun-check.1.scd \
	man/agentrun-relay.1.scd man/agentrun-netproxy.1.scd man/agentrun-profile.5.scd
EXTRA_DIST += $(MAN_SCD)
nodist_man_MANS += $(MAN_SCD:.scd=)
CLEANFILES += $(MAN_SCD:.scd=)
# A path in scdoc text: '_' would start an underline.
man_path = $(subst _,\\_,$(1))
# Version and paths come from configure, or from make install prefix=...:
# remade at every make, as the contrib snippets, written only when they change.
man/%: $(srcdir)/man/%.scd contrib-force
	@mkdir -p man
	$(AM_V_GEN)sed -e 's|@VERSION[@]|$(VERSION)|g' -e 's|@datadir[@]|$(call man_path,$(datadir))|g' \
	  -e 's|@apparmordir[@]|$(call man_path,$(apparmordir))|g' \
	  $< | $(SCDOC) >$@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@; }
