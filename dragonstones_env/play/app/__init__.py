"""The browser table: play against bots, replay records, see what a checkpoint was thinking.

``dragonstones serve`` or ``python -m dragonstones_env.play.app`` (see :mod:`dragonstones_env.play.app.server`).
"""
