import sys

from ddplint.cli import main

sys.exit(main())
