import sys

from recheck_gate.cli import main

sys.exit(main())
