import sys

from ddplint.commands.cli import main

sys.exit(main())
