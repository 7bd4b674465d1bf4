#!/usr/bin/env python
"""Django's command-line utility for Recheck."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "recheck.settings")
    from core.collector import collector_pause

    # The collector is paused while Django sets up and resumed when the apps are ready (cli.apps):
    # its passes over the set-up's long-lived objects find nothing to free (core.collector).
    collector_pause()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
