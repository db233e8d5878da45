"""One probe per system for ``make verify`` (``components/operate/verify.py``): each sends its
system's synthetic, signed, check-marked request through the real Function URL and removes
what it wrote."""
