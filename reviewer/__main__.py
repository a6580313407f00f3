from reviewer.cli import entry

# entry() ends the process itself (os._exit after flushing), which also
# settles the exit status after a KeyboardInterrupt that main() caught: one
# that passed through exec() of source text (as dataclasses build their
# methods) leaves a flag in CPython that would otherwise make `python -m` end
# by SIGINT whatever main() returned.
entry()
