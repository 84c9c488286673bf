from kschedctl.cli import main

main()
