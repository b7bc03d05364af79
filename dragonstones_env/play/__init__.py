"""What seats policies at a table: the layer between the policies and evaluation.

* :mod:`~dragonstones_env.play.single_agent`: the Gymnasium env (one learner, the other seats
  policies by spec); the entry point of every game's Gym id;
* :mod:`~dragonstones_env.play.arena`: whole games between policies, seat-rotated matches;
* :mod:`~dragonstones_env.play.app`, :mod:`~dragonstones_env.play.terminal`,
  :mod:`~dragonstones_env.play.gif`: people at the table — the web app, terminal play, GIFs.
"""
