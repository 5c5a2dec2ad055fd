"""``python -m minilazy.conformance.programs IMPL``: key traces of the programs on stdin."""

from minilazy.conformance.programs.interpret import main

raise SystemExit(main())
