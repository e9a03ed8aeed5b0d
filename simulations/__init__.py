"""Network and fingerprint simulations reproducing and extending the SpamWatch paper."""
