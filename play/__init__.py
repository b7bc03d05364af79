"""Playing the games: the web app, terminal play and the command line (above policies in the layering)."""
