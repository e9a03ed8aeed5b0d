"""The IMAP watcher: files spam into Junk and turns the user's moves into votes."""
