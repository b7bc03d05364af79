"""The browser table: play against bots, replay records, see what a checkpoint was thinking.

``dragonstones serve`` or ``python -m play.app`` (see :mod:`play.app.server`).
"""
