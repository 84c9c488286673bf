"""The local control plane (``kschedctl lab``): binaries, PKI, processes and simulated nodes."""
