# hooks/: running OCI hooks. Part of libagentrun.a (see runtime/local.mk).
