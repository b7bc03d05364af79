"""What seats policies at a table: the layer between the policies and the trainers.

* :mod:`play.single_agent`: the Gymnasium env (one learner, the other seats policies by spec);
  the entry point of every game's Gym id (was ``dragonstones_env.gym_env``);
* :mod:`play.arena`: whole games between policies, win rates (was ``dragonstones_env.arena``);
* :mod:`play.league`: the self-play league of both trainers, SB3 and RLlib (was ``training.league``);
* :mod:`play.app`, :mod:`play.terminal`, :mod:`play.cli`: people at the table — the web app,
  terminal play and the ``dragonstones`` command.
"""
