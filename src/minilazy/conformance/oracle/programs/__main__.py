"""``python -m minilazy.conformance.oracle.programs IMPL``: key traces of the programs on stdin."""

from minilazy.conformance.oracle.programs.interpret import main

raise SystemExit(main())
