"""L5: the ``webark`` command line (click). It only parses arguments and wires parts."""
