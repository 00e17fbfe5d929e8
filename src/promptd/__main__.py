from promptd.cli.main import main

raise SystemExit(main())
