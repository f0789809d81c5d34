"""Widget builders: each returns an ipywidgets widget with no hidden global state.

Every widget shows a short message, never a traceback, when a choice is out
of range, and sits in the book beside a static figure at the lesson's
defaults.
"""
