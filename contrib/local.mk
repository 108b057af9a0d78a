# contrib/: configuration snippets, profiles, units.
