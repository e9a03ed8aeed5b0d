"""The p2pspam user agent: peer client, mail sources, IMAP, filters."""
