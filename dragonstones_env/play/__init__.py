"""What seats policies at a table: the layer between the policies and evaluation.

* :mod:`~dragonstones_env.play.single_agent`: the Gymnasium env (one learner, the other seats
  policies by spec); the entry point of every game's Gym id;
* :mod:`~dragonstones_env.play.vector`: :class:`OpponentsVectorEnv`, many such tables in lockstep
  (in worker processes if asked), each opponent policy deciding for all its seats at once; a
  Gymnasium vector env. :mod:`~dragonstones_env.play.sb3` (needs stable-baselines3) is the same
  engine as an SB3 ``VecEnv``, ``OpponentsVecEnv``;
* :mod:`~dragonstones_env.play.arena`: whole games between policies, seat-rotated matches;
* :mod:`~dragonstones_env.play.table`: a table for people, framework-free — a live game and a
  replay, shown through each game's presenter (``GameSpec.presenter``); where their policies and
  decks come from is :mod:`~dragonstones_env.play.sources`, what they refuse
  :mod:`~dragonstones_env.play.refusals`;
* :mod:`~dragonstones_env.play.app`, :mod:`~dragonstones_env.play.terminal`,
  :mod:`~dragonstones_env.play.gif`: people at the table — the web app, terminal play, GIFs (the
  terminal and GIFs import nothing of the app).
"""

from .single_agent import OpponentSampler
from .vector import OpponentsVectorEnv

__all__ = ["OpponentSampler", "OpponentsVectorEnv"]
