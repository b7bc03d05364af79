"""The search policy (``ismcts``) and the games' determinization samplers (issue #27).

The samplers leak nothing: branch a game on a fact the seat has not seen (another player's sealed
bid, the order of a pile or of the stacks, the others' coins in table mode, the future's random
draws, what another player saw with a torch) and the determinizations drawn with the same random
generator are identical in both branches, so their distribution cannot depend on that fact; and
every determinization shows the seat exactly its own observation. The search then reads the game
only through the sampler, and picks the same action in both branches.
"""

from __future__ import annotations

import copy
import json
import threading

import numpy as np
import pytest

from dragonstones_env import games
from dragonstones_env.games.drachenschatten.cards import CARD_TYPE_OF_ID
from dragonstones_env.games.drachenschatten.rules import CAVES_STACKS, VILLAGE_STACKS
from dragonstones_env.play.arena import play_game
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.play.sources import policies_for
from dragonstones_env.policies import PolicyError, available, decide, information_state, load_policy
from dragonstones_env.policies.checkpoint import expected_layout
from dragonstones_env.policies.search import SearchPolicy, giving_way
from tests.aec_support import play_until, random_step
from tests.contract import toy_auction
from training.promote import promote

FIST = games.get("dragonstones")
DS = games.get("drachenschatten")
FAST = "ismcts:simulations=6:horizon=6"  # Fist: a short look-ahead keeps the tests quick
FAST_DS = "ismcts:simulations=6"


def fingerprint(game) -> str:
    """Everything of a Fist engine, hidden parts included (a determinization is all of it)."""
    a = game.auction
    return repr((game.state_dict(), game.face_down, game.special_pile,
                 None if a is None else sorted(a._sealed.items()), game.rng.bit_generator.state,
                 [(pl.fairy, pl.common, pl.silver) for pl in game.players]))


def ds_fingerprint(game) -> str:
    """Everything of a DrachenSchatten engine by card type, hidden parts included."""
    stacks = [[CARD_TYPE_OF_ID[c] for c in s] for s in game._stacks]
    memories = [{s: CARD_TYPE_OF_ID[c] for s, c in m.items()} for m in game._memories]
    return repr((game.state_dict(), stacks, memories, game._rng.bit_generator.state))


def samples(spec, game, seat, options, seed=0, k=8, guess=None) -> list[str]:
    rng = np.random.default_rng(seed)
    fp = fingerprint if spec is FIST else ds_fingerprint
    return [fp(spec.sample_state(game, seat, rng, options, guess)) for _ in range(k)]


def at_a_later_bid(e, rng) -> bool:
    """Random play until a gold bid of a seat after someone who has sealed (F10)."""
    return play_until(e, rng, lambda raw: raw.game.decision.kind == "bid" and bool(raw.game.auction._sealed))


# ------------------------------------------------------------------ the samplers
@pytest.mark.parametrize(("spec", "mode"), [(FIST, "recall"), (FIST, "table"), (DS, None)], ids=["fist-recall",
                                                                                                "fist-table", "ds"])
def test_every_determinization_shows_the_seat_its_own_view(spec, mode):
    options = {} if mode is None else {"observation_mode": mode}
    rng = np.random.default_rng(1)
    checked = 0
    for seed in range(6):
        n = spec.players[seed % len(spec.players)]
        e = spec.raw_env(num_players=n, **options)
        e.reset(seed=seed)
        sim = spec.raw_env(num_players=n, **options)
        while e.game.decision is not None:
            agent = e.agent_selection
            if rng.random() < 0.1:
                sim.resume(spec.sample_state(e.game, e.agent_name_mapping[agent], rng, e.options))
                real, drawn = e.observe(agent), sim.observe(agent)
                assert np.array_equal(real["observation"], drawn["observation"])
                assert np.array_equal(real["action_mask"], drawn["action_mask"])
                for _ in range(60):  # and the determinization plays on by the rules
                    if sim.game.decision is None:
                        break
                    sim.step(int(rng.choice(sim.legal_actions())))
                checked += 1
            e.step(int(rng.choice(e.legal_actions())))
    assert checked >= 40


@pytest.mark.parametrize("mode", ["recall", "table"])
def test_fist_samples_do_not_depend_on_a_sealed_bid_the_seat_has_not_seen(mode):
    """F10, F43: branch on the bid of an earlier bidder; the later bidder's samples are identical."""
    rng = np.random.default_rng(2)
    checked = 0
    for seed in range(30):
        e = FIST.env(num_players=3 + seed % 4, observation_mode=mode)
        e.reset(seed=seed)
        if not play_until(e, rng, lambda raw: raw.game.decision.kind == "bid" and raw.game.decision.player
                          < raw.num_players - 1):
            continue
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        if len(legal) < 2:
            continue
        a1, a2 = rng.choice(legal, size=2, replace=False)
        left, right = copy.deepcopy(e), copy.deepcopy(e)
        left.step(int(a1))
        right.step(int(a2))
        seat = left.unwrapped.game.decision.player
        assert left.unwrapped.game.auction._sealed != right.unwrapped.game.auction._sealed  # a real difference
        for guess in (None, _first_legal):
            assert samples(FIST, left.unwrapped.game, seat, {"observation_mode": mode}, seed, guess=guess) == \
                samples(FIST, right.unwrapped.game, seat, {"observation_mode": mode}, seed, guess=guess)
        checked += 1
    assert checked >= 15


def _first_legal(game, rng):
    """A guess that reads the determinization being drawn (as the search's does)."""
    return game.legal_options()[-1]


def test_fist_samples_do_not_depend_on_hidden_orders_nor_the_future():
    """F7, F8: the order of the face-down characters and of the special pile, and the random
    generator (the next stone draws, reshuffles, the Goblin), are the same hidden fact for every seat."""
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(20):
        e = FIST.env(num_players=4)
        e.reset(seed=seed)
        for _ in range(int(rng.integers(0, 120))):
            if e.unwrapped.game.over:
                break
            random_step(e, rng)
        if e.unwrapped.game.over:
            continue
        left = e.unwrapped.game
        right = copy.deepcopy(left)
        right.face_down = list(reversed(right.face_down)) if len(right.face_down) > 1 else right.face_down
        rng.shuffle(right.special_pile)
        right.rng = np.random.default_rng(seed + 999)
        seat = left.decision.player
        assert samples(FIST, left, seat, {}, seed) == samples(FIST, right, seat, {}, seed)
        checked += 1
    assert checked >= 15


def test_fist_table_mode_samples_do_not_depend_on_the_others_coins():
    """F43: in table mode the others' coins behind their screens are hidden (their totals are not)."""
    rng = np.random.default_rng(4)
    checked = 0
    for seed in range(20):
        e = FIST.env(num_players=4, observation_mode="table")
        e.reset(seed=seed)
        if not play_until(e, rng, lambda raw: raw.game.auction is None or not raw.game.auction._sealed):
            continue
        left = e.unwrapped.game
        seat = left.decision.player
        a, b = [p for p in range(4) if p != seat][:2]
        right = copy.deepcopy(left)
        if right.players[a].common == 0:
            a, b = b, a
        if right.players[a].common == 0:
            continue
        right.players[a].common -= 1  # one common gold from a to b: every total is the same
        right.players[b].common += 1
        obs = e.unwrapped._observer.observe
        assert np.array_equal(obs(left, seat), obs(right, seat))  # the seat cannot tell them apart
        assert samples(FIST, left, seat, {"observation_mode": "table"}, seed) == \
            samples(FIST, right, seat, {"observation_mode": "table"}, seed)
        # in recall mode the coins are derived from public events (F43): kept as they are
        assert samples(FIST, left, seat, {}, seed) != samples(FIST, right, seat, {}, seed)
        checked += 1
    assert checked >= 10


def test_fist_samples_draw_what_is_hidden_afresh():
    """The hidden facts do vary across samples: the next face-down card, the earlier sealed bids."""
    rng = np.random.default_rng(5)
    e = FIST.env(num_players=4)
    e.reset(seed=5)
    assert at_a_later_bid(e, rng)
    game = e.unwrapped.game
    seat = game.decision.player
    sealed_before = dict(game.auction._sealed)
    draws = [FIST.sample_state(game, seat, rng) for _ in range(300)]
    nexts = {g.face_down[-1] for g in draws}
    assert nexts == set(game.face_down)  # every face-down card comes next in some sample
    sealed = {tuple(sorted(g.auction._sealed.items())) for g in draws}
    assert len(sealed) > 10
    for g in draws:
        for p, (fairy, common, black, amulet) in g.auction._sealed.items():  # bids the bidder could pay (F10)
            pl = g.players[p]
            assert fairy <= pl.fairy and common <= pl.common and black <= pl.black and amulet <= pl.amulets
        assert [ev["event"] for ev in g.record] == ["choice"] * len(sealed_before)  # the real record is not copied


def test_ds_samples_do_not_depend_on_the_stacks_order_nor_what_others_saw():
    """D2, D4: the order of the cards left in the stacks, and the torch memories of the other
    players, are hidden from the seat; its own memory is kept."""
    rng = np.random.default_rng(6)
    checked = 0
    for seed in range(20):
        e = DS.env(num_players=2 + seed % 3)
        e.reset(seed=seed)
        for _ in range(int(rng.integers(0, 40))):
            if e.unwrapped.game.over:
                break
            random_step(e, rng)
        left = e.unwrapped.game
        if left.over:
            continue
        seat = left.decision.player
        right = copy.deepcopy(left)
        known = right._memories[seat]
        for group in (VILLAGE_STACKS, CAVES_STACKS):  # permute the cards the seat has not seen
            places = [(s, i) for s in group for i in range(len(right._stacks[s]))
                      if not (s in known and i == len(right._stacks[s]) - 1)]
            cards = [right._stacks[s][i] for s, i in places]
            for (s, i), c in zip(places, [cards[j] for j in rng.permutation(len(cards))], strict=True):
                right._stacks[s][i] = c
        other = (seat + 1) % right.num_players
        nonempty = [s for s in range(16) if right._stacks[s]]
        right._memories[other] = {nonempty[0]: right._stacks[nonempty[0]][-1]}  # another saw a card
        right._rng = np.random.default_rng(seed + 999)
        assert ds_fingerprint(left) != ds_fingerprint(right)
        assert samples(DS, left, seat, {}, seed) == samples(DS, right, seat, {}, seed)
        checked += 1
    assert checked >= 15


def test_ds_samples_keep_the_seats_torch_memory_and_deal_the_rest_evenly():
    e = DS.env(num_players=2)
    e.reset(seed=7)
    game = e.unwrapped.game
    seat = game.decision.player
    top = game._stacks[0][-1]
    game._memories[seat] = {0: top}  # the seat saw the top of stack 0 (D4)
    rng = np.random.default_rng(7)
    draws = [DS.sample_state(game, seat, rng) for _ in range(400)]
    assert all(g._stacks[0][-1] == top and g._memories[seat] == {0: top} for g in draws)
    assert all(sorted(c for s in VILLAGE_STACKS for c in g._stacks[s]) ==
               sorted(c for s in VILLAGE_STACKS for c in game._stacks[s]) for g in draws)
    # the top of stack 1 is any unseen village card, about as often as the cards' share
    unseen = [c for s in VILLAGE_STACKS for c in game._stacks[s]]
    unseen.remove(top)
    tops = [g._stacks[1][-1] for g in draws]
    for t in set(map(CARD_TYPE_OF_ID.__getitem__, unseen)):
        share = sum(CARD_TYPE_OF_ID[c] == t for c in unseen) / len(unseen)
        seen = sum(CARD_TYPE_OF_ID[c] == t for c in tops) / len(tops)
        assert abs(seen - share) < 0.08, (t, seen, share)


def test_a_sampler_never_changes_the_real_game():
    rng = np.random.default_rng(8)
    for spec, mode in ((FIST, "table"), (DS, None)):
        e = spec.env(num_players=spec.players[0], **({} if mode is None else {"observation_mode": mode}))
        e.reset(seed=8)
        for _ in range(25):
            random_step(e, rng)
        game = e.unwrapped.game
        before = copy.deepcopy(game)
        for _ in range(5):
            spec.sample_state(game, game.decision.player, rng, e.unwrapped.options)
        fp = fingerprint if spec is FIST else ds_fingerprint
        assert fp(game) == fp(before) and game.record == before.record


# ------------------------------------------------------------------ the search
def test_the_search_picks_the_same_action_whatever_it_has_not_seen():
    """End to end: the search, seeded alike, acts alike in two branches of a hidden sealed bid."""
    rng = np.random.default_rng(9)
    checked = 0
    for seed in range(12):
        e = FIST.env(num_players=4)
        e.reset(seed=seed)
        if not play_until(e, rng, lambda raw: raw.game.decision.kind == "bid" and raw.game.decision.player == 2):
            continue
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        if len(legal) < 2:
            continue
        left, right = copy.deepcopy(e), copy.deepcopy(e)
        left.step(int(legal[0]))
        right.step(int(legal[-1]))
        agent = left.agent_selection
        picks = [decide(load_policy(FAST, seed=seed), branch, agent) for branch in (left, right)]
        assert picks[0] == picks[1]
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize(("spec", "search", "players"), [(FIST, FAST, 3), (FIST, FAST, 4), (DS, FAST_DS, 2),
                                                        (DS, FAST_DS, 3), (DS, FAST_DS, 4)])
def test_the_search_plays_whole_games_with_legal_actions_only(spec, search, players):
    policies = [load_policy(search, seed=1)] + [load_policy(spec.default_bot, seed=i) for i in range(1, players)]
    seen = []

    def check(agent, action):  # the env raises on an illegal action too; this says whose it was
        seen.append((agent, action))

    result = play_game(lambda: spec.env(num_players=players), policies, ["s"] * players, 11, on_action=check)
    assert result.steps == len(seen) and (result.winners or result.truncated)
    assert policies[0].simulated > 0


def test_the_search_is_deterministic_with_a_seed():
    for spec, search in ((FIST, FAST), (DS, FAST_DS)):
        streams = []
        for _ in range(2):
            policies = [load_policy(search, seed=4), load_policy(spec.default_bot, seed=1),
                        load_policy(search, seed=5)]
            stream = []
            play_game(lambda spec=spec: spec.env(num_players=3), policies, ["a", "b", "c"], 3,
                      on_action=lambda agent, action, stream=stream: stream.append((agent, action)))
            streams.append(stream)
        assert streams[0] == streams[1]


def test_the_search_reports_its_roots_visits_and_plays_the_most_visited():
    """root_visits (an expert-iteration teacher's policy target, training/imitate.py): every simulation
    passes the root once, and the move played is the most visited."""
    e = FIST.env(num_players=4)
    e.reset(seed=3)
    while e.unwrapped.game.decision.kind != "bid" or e.observe(e.agent_selection)["action_mask"].sum() < 6:
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    agent = e.agent_selection
    s = load_policy("ismcts:simulations=20:horizon=2", seed=0)
    action = decide(s, e, agent)
    visits = s.root_visits
    legal = set(np.flatnonzero(e.observe(agent)["action_mask"]).tolist())
    assert sum(visits.values()) == 20 and set(visits) <= legal and len(visits) >= 2
    assert visits[action] == max(visits.values())
    forced = e.observe(agent)
    only = int(np.flatnonzero(forced["action_mask"])[0])
    forced["action_mask"] = np.zeros_like(forced["action_mask"])
    forced["action_mask"][only] = 1
    s.observe_game(information_state(e, agent))
    assert s.act(forced) == only and s.root_visits == {only: 1}  # nothing to search: all on the one move


def test_the_search_needs_the_game_and_a_game_with_a_sampler():
    s = load_policy("ismcts", seed=0)
    e = FIST.env(num_players=3)
    e.reset(seed=0)
    with pytest.raises(RuntimeError, match="needs the game"):
        s.act(e.observe(e.agent_selection))
    games.register(toy_auction.SPEC)
    try:
        toy = toy_auction.SPEC.env(num_players=2)
        toy.reset(seed=0)
        with pytest.raises(PolicyError, match="no determinization sampler"):
            decide(s, toy, toy.agent_selection)
    finally:
        games.unregister(toy_auction.SPEC.id)


@pytest.mark.parametrize(("spec", "words"), [
    ("ismcts:simulations=0", "simulations is simulations per decision, an integer in [1, 20000]"),
    ("ismcts:simulations=ten", "'ten' is not allowed"),
    ("ismcts:sims=10", "unknown option 'sims'"),
    ("ismcts:simulations", "is not key=value"),
    ("ismcts:simulations=5:simulations=6", "given twice"),
    ("ismcts:hidden=psychic", "model (as the rollout policy would bid) or uniform"),
    ("ismcts:c=-1", "c is UCB1's exploration constant"),
    ("ismcts:c=nan", "c is UCB1's exploration constant"),
    ("ismcts:horizon=-3", "horizon is decisions"),
    ("ismcts:rollout=ismcts", "not ismcts"),
    ("ismcts:rollout=ismcts:simulations=3", "not ismcts"),
    ("ismcts:rollout=nonesuch", "unknown policy spec 'nonesuch'"),
    ("ismcts:rollout=random:horizon=10", "has no win_chance nor critic"),
    ("ismcts:seed=-1", "seed is the search's seed"),
    ("ismcts:order=best", "order is the order a node widens in"),
    ("ismcts:order=probability:rollout=heuristic", "'heuristic' has none: use order=sample"),
    ("ismcts:", "'' is not key=value"),
])
def test_bad_search_options_are_refused(spec, words):
    with pytest.raises(PolicyError) as err:
        load_policy(spec)
    assert words in str(err.value) and repr(spec) in str(err.value)


def test_search_options_are_read_and_named():
    s = load_policy("ismcts:simulations=40:rollout=random:horizon=0:c=1.5:widen=2:hidden=uniform:seed=9")
    assert isinstance(s, SearchPolicy) and s.seed == 9
    o = s.options
    assert (o.simulations, o.rollout, o.horizon, o.c, o.widen, o.hidden, o.order) == \
        (40, "random", 0, 1.5, 2.0, "uniform", "sample")
    assert load_policy("ismcts:rollout=champion:order=probability").options.order == "probability"
    assert load_policy("ismcts:seed=9", seed=3).seed == 3  # load_policy's seed comes first
    assert load_policy("ismcts:rollout=heuristic").game == "dragonstones"  # its rollout policy's game
    assert load_policy("ismcts").game is None  # the default rollout is each game's own bot
    assert "ismcts" in available()


def test_a_search_with_a_rollout_of_one_game_is_refused_at_another():
    s = load_policy("ismcts:rollout=heuristic:simulations=2")
    e = DS.env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(PolicyError, match="plays dragonstones"):
        decide(s, e, e.agent_selection)


def test_the_default_horizon_is_the_rollout_policys_judgement_or_the_end():
    for spec, want in ((FIST, 40), (DS, 0)):
        e = spec.env(num_players=3)
        e.reset(seed=1)
        s = load_policy("ismcts:simulations=1", seed=0)
        s._prepare(information_state(e, e.agent_selection))
        assert s._horizon == want


def test_a_checkpoint_rollout_judges_the_horizon_with_its_critic():
    """With a checkpoint as its rollout policy, the search looks AUTO_HORIZON ahead and pays each seat
    its own critic's estimate, moved onto the zero-sum end; it plays legal moves, deterministically."""
    e = FIST.env(num_players=4)
    e.reset(seed=5)
    s = load_policy("ismcts:simulations=4:rollout=champion", seed=0)
    s._prepare(information_state(e, e.agent_selection))
    assert s._horizon == 40 and all(bot.has_value for bot in s._bots)
    s._sim.resume(copy.deepcopy(e.unwrapped.game))
    estimate = s._estimate()
    values = [s._bots[p].value(e.observe(a)) for p, a in enumerate(e.possible_agents)]
    assert sum(estimate) == pytest.approx(0.0, abs=1e-9)
    assert np.argsort(estimate).tolist() == np.argsort(values).tolist()  # the critics' order is kept
    streams = []
    for _ in range(2):
        policies = [load_policy("ismcts:simulations=3:horizon=4:rollout=champion", seed=2)] + \
                   [load_policy("heuristic", seed=i) for i in (1, 2, 3)]
        stream = []
        play_game(lambda: FIST.env(num_players=4), policies, list("abcd"), 6,
                  on_action=lambda agent, action, stream=stream: stream.append((agent, action)))
        streams.append(stream)
    assert streams[0] == streams[1] and policies[0].simulated > 0


def test_order_probability_widens_in_the_rollout_policys_order():
    """order=probability: a node's candidates are the legal actions by the rollout policy's probabilities,
    likeliest first, so the root's candidates after n simulations are its 1 + widen*sqrt(n) likeliest;
    order=sample starts from one move the policy samples."""
    e = FIST.env(num_players=4)
    e.reset(seed=3)
    while e.unwrapped.game.decision.kind != "bid" or e.observe(e.agent_selection)["action_mask"].sum() < 6:
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    agent = e.agent_selection
    obs = e.observe(agent)
    s = load_policy("ismcts:simulations=9:horizon=2:rollout=champion:order=probability", seed=0)
    s._prepare(information_state(e, agent))
    probs = s._bots[0].probabilities(obs["observation"][None], obs["action_mask"][None])[0]
    legal = np.flatnonzero(obs["action_mask"]).tolist()
    ranked = sorted(legal, key=lambda a: -probs[a])
    assert s._first(s._bots[0], obs, legal) == ranked
    action = decide(s, e, agent)
    assert action in ranked[:2]  # 9 simulations at widen=0.5: the root weighs its two likeliest moves
    sample = load_policy("ismcts:simulations=9:horizon=2:rollout=champion", seed=0)
    sample._prepare(information_state(e, agent))
    assert len(sample._first(sample._bots[0], obs, legal)) == 1
    with pytest.raises(PolicyError, match="order=probability needs a rollout policy with action probabilities"):
        decide(load_policy("ismcts:order=probability"), e, agent)  # the game's own bot is a rule bot


def test_the_heuristics_win_chances_are_a_distribution_over_the_seats():
    rng = np.random.default_rng(12)
    bot = load_policy("heuristic")
    e = FIST.env(num_players=5)
    e.reset(seed=12)
    for _ in range(80):
        random_step(e, rng)
    chances = [bot.win_chance(e.observe(a)) for a in e.possible_agents]
    assert all(0 < c < 1 for c in chances) and sum(chances) == pytest.approx(1.0)


# ------------------------------------------------------------------ where bots go
def test_the_search_sits_in_the_gym_envs_opponent_seats():
    for spec, search in ((FIST, FAST), (DS, FAST_DS)):
        g = make_gym(spec.id, num_players=3, opponents=search)
        g.reset(seed=3)
        done = False
        while not done:
            action = int(np.flatnonzero(g.action_masks())[0])
            _, _, terminated, truncated, _ = g.step(action)
            done = terminated or truncated
        assert any(p is not None and p.simulated > 0 for p in g.seat_policies)


def test_the_apps_seat_menus_list_the_search():
    menus = {name: policies_for(games.get(name)) for name in ("dragonstones", "drachenschatten")}
    assert all("ismcts" in menu for menu in menus.values())
    fist, ds = "ismcts:simulations=10:rollout=champion:order=probability", "ds-champion-search"
    # each game's strongest search, at its own game's tables only (its rollout policy plays one game);
    # DrachenSchatten's is shipped by name (a card naming its search), listed as the checkpoints are
    assert fist in menus["dragonstones"] and fist not in menus["drachenschatten"]
    assert ds in menus["drachenschatten"] and ds not in menus["dragonstones"]


def test_the_evaluation_takes_a_search_in_a_lineup(tmp_path):
    from dragonstones_env.evaluation import evaluate

    result = evaluate([], 3, 3, lineup=[FAST_DS, "ds-heuristic", "ds-heuristic"], game="drachenschatten",
                      progress=False)
    row = next(r for r in result["policies"] if r["spec"] == FAST_DS)
    assert row["games"] == 3


def test_the_league_seats_a_search_from_its_pool(tmp_path):
    from training.league import League

    league = League(tmp_path, {"pool": 1.0}, pool=[FAST], game="dragonstones_v1")
    league.check()
    lineup = league.sample_lineup(np.random.default_rng(0), 3)
    assert all(isinstance(p, SearchPolicy) for p in lineup)


def test_resume_plays_an_engine_on_and_refuses_a_finished_or_foreign_one():
    rng = np.random.default_rng(13)
    e = FIST.raw_env(num_players=4)
    e.reset(seed=13)
    for _ in range(30):
        e.step(int(rng.choice(e.legal_actions())))
    twin = FIST.raw_env(num_players=4)
    twin.resume(copy.deepcopy(e.game))
    assert twin.agent_selection == e.agent_selection
    for _ in range(60):
        if e.game.over:
            break
        assert twin.agent_selection == e.agent_selection
        assert np.array_equal(twin.observe(twin.agent_selection)["observation"],
                              e.observe(e.agent_selection)["observation"])
        a = int(rng.choice(e.legal_actions()))
        e.step(a)
        twin.step(a)
    with pytest.raises(ValueError, match="resume takes an engine of a 3-player game"):
        FIST.raw_env(num_players=3).resume(e.game)


def test_the_panel_takes_a_search_as_its_candidate():
    from dragonstones_env.evaluation import panel

    result = panel(FAST_DS, ["random"], [2], games=2, game="drachenschatten", ks=[1], copies=[])
    mix = result["mixes"][0]
    assert (mix["opponent"], mix["k"], mix["games"]) == ("random", 1, 2)


def _bid_position(seed=3):
    e = FIST.env(num_players=4)
    e.reset(seed=seed)
    while e.unwrapped.game.decision.kind != "bid" or e.observe(e.agent_selection)["action_mask"].sum() < 6:
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    return e


def test_a_search_giving_way_waits_between_simulations_and_decides_the_same():
    """The web app's all-bot searches give way to a human table's (issue #49): a search inside
    giving_way(event) waits while the event is clear, and its decision is the one it makes alone."""
    e = _bid_position()
    agent = e.agent_selection
    spec = "ismcts:simulations=20:horizon=2"
    alone = load_policy(spec, seed=7)
    expected = decide(alone, e, agent)
    clear, done = threading.Event(), []

    def run():
        with giving_way(clear):
            done.append(decide(waiting, e, agent))

    waiting = load_policy(spec, seed=7)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive() and done == []  # held before its first simulation
    clear.set()
    thread.join(30)
    assert done == [expected] and waiting.root_visits == alone.root_visits
    assert decide(load_policy(spec, seed=7), e, agent) == expected  # outside the block it does not wait


# ---------------------------------------------------------------------- a search by name (a card that names it)


def search_card(folder, **card):
    """A folder whose card names a search (``"algorithm": "ismcts"``), with ``card``'s keys."""
    folder.mkdir()
    game = games.get(card.pop("env", "drachenschatten"))
    text = {"algorithm": "ismcts", "env": game.name, "layout": expected_layout(game.name),
            "search": "ismcts:simulations=4:rollout=ds-heuristic:guard=4", **card}
    (folder / "card.json").write_text(json.dumps(text))
    return folder


def test_a_card_names_a_search_that_plays_under_the_folders_name(tmp_path):
    folder = search_card(tmp_path / "s", cells=[])
    search = load_policy(str(folder), seed=3)
    assert isinstance(search, SearchPolicy) and search.options.simulations == 4 and search.options.guard == 4
    assert search.game == "drachenschatten_v1" and search.card["cells"] == []
    result = play_game(lambda: games.get("drachenschatten").env(num_players=3),
                       [search, load_policy("ds-heuristic", seed=1), load_policy("ds-heuristic", seed=2)],
                       ["s", "ds-heuristic", "ds-heuristic"], seed=5)
    assert result.winners and search.simulated > 0
    assert search.spec == "ismcts:simulations=4:rollout=ds-heuristic:guard=4"  # its errors name the search


@pytest.mark.parametrize(("card", "words"), [
    ({"search": "heuristic"}, r"'search' must be a search spec, ismcts:key=value:\.\.\., got 'heuristic'"),
    ({"search": 7}, "'search' must be a search spec"),
    ({"search": "ismcts"}, "'search' must be a search spec"),
    ({"search": "ismcts:simulations=0"}, "simulations='0' is not allowed"),
    ({"search": "ismcts:rollout=policies/ds-champion"}, "is not a built-in or shipped name"),
    ({"search": "ismcts:rollout=../x"}, "is not a built-in or shipped name"),
    ({"search": "ismcts:rollout=heuristic"}, "rolls out with a policy of dragonstones, the card's env is "
                                             "drachenschatten_v1"),
    ({"search": "ismcts:rollout=heuristic:guard=4", "env": "dragonstones"}, "has no loop to guard"),
])
def test_a_bad_search_card_is_refused_by_name(tmp_path, card, words):
    folder = search_card(tmp_path / "s", **card)
    with pytest.raises(PolicyError, match=words) as err:
        load_policy(str(folder))
    assert str(folder) in str(err.value)  # names the folder it came from


def test_promote_ships_a_search_card_as_it_is(tmp_path):
    folder = search_card(tmp_path / "s")
    assert [p.name for p in promote(folder, tmp_path / "shipped")] == ["card.json"]
    assert isinstance(load_policy(str(tmp_path / "shipped")), SearchPolicy)
    with pytest.raises(PolicyError, match="names a search: its search spec says how it plays"):
        promote(folder, tmp_path / "other", play={"deterministic": True})
    assert not (tmp_path / "other").exists()
