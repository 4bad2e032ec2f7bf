"""Static forms of the views: deterministic ``text/plain`` and escaped ``text/html``, one module
per view (``table``, ``case``, ``pairwise``, ``rubric``, ``calibration``) over shared helpers
(``common``).

These are what GitHub, nbviewer, exported HTML and a reopened notebook without a kernel show,
and what nbval compares. Every piece of data goes through ``html.escape``; nothing here runs.
"""
