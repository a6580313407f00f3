"""Renderers: one report model (`model.py`), one small module per output format (`formats.py` picks one)."""
