"""Built-in subcommands of the ``p2pspam`` command line."""
