# A TAB is answered without loading the CLI when possible (kschedctl/quick_complete.py).
from kschedctl.quick_complete import main

main()
