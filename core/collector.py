"""Python's cyclic garbage collector while a command sets Django up.

Django's set-up imports every app's models, admin-free as it is, and makes a few hundred thousand
objects (modules, classes, functions, fields) that live as long as the process. Each of the
collector's full passes walks all of them and finds nothing to free: during a short command's
set-up and again when the interpreter exits, those passes were a third of what `manage.py verify`
of an unknown pull request cost. `manage.py` pauses the collector before the set-up; once the
apps are ready (`cli.apps`), what the set-up made is moved out of the collector's sight
(`gc.freeze`, Python's documented way to keep long-lived start-up objects out of its passes) and
the collector runs again, as usual, for everything the command itself makes.

Only a pause this module made is resumed: a process that never paused (the site, a worker, the
tests) is left as it is."""
import gc

_paused = False


def collector_pause() -> None:
    """Stop the collector until `collector_resume`; a no-op when it is already stopped."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def collector_resume() -> None:
    """Keep what exists now out of the collector's passes and start it again, if
    `collector_pause` stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
