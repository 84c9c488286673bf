"""The shared bottom every block may import: errors and exit codes, terminal escaping, YAML
text, termination signals, bounded user-file reading and input limits. Imports nothing above it."""
