# netproxy/: agentrun-netproxy and agentrun-relay. libc (+ libarspec.a for state.json).
