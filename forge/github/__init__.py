"""The forges Recheck speaks, one module each, registered with `forge.interface` when the app is
ready. A new forge is one more module here (and its name and link shapes in `core.forges`)."""
