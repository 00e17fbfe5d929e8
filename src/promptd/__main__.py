from promptd.cli import main

raise SystemExit(main())
