"""Your own characters (issue #16): the box's three blank cards, as data or as Python.

A custom special character is a name, a number of copies (1-3), a rules text and a power.

* **As data** (a YAML or TOML file, see ``examples/characters.yaml``): the power is a list of
  *effects*, each one of the primitives below, which are what the 25 specials already do.
* **As Python**: a function ``power(game, player, auction)`` over the same table primitives
  (``game.gain``, ``game.pay``, ``game.gain_stone``, ``game.pay_stones``, ``game.score``,
  ``game.draw_stone``) and decision mechanism (``game.ask``) as :mod:`.powers`, registered with
  the :func:`character` decorator.

Both go through one validation (:func:`validate`): unknown effect, impossible amount, a name
that clashes with a box character or another card (compared as :func:`name_key` has them: after
Unicode NFKC normalisation, case-folding, stripping and removing zero-width and other format
characters, so ``"Troll "``, ``"troll"`` and ``"Wi\u200btch"`` clash), and a conservation check
that runs the power on random states and refuses one that creates or destroys a coin or a stone.
A Python power is also checked where it runs: the engine compares the F2 totals before and
after every use of one and stops the game with a ``ConservationError`` naming the card
(:meth:`.flow.Game._audit_done`), since random states cannot find every state a power breaks on.
A characters file is read up to ``FILE_BYTES["deck"]`` bytes (1 MB, dragonstones_env/bounds.py),
its YAML without aliases.

Layout v1 (#9) is not changed by a custom card: a card takes one of the reserved character
slots ``custom_1..4``, its decisions use the engine's decision kinds (:data:`.decisions.KINDS`,
named by what is chosen, with the card as the asker) and option kinds, and no numeric features
of its effect are added (they would change the layout signature). The primitives and the
decision kind each asks:

==================  ======================================================  ===========================
effect              what it does                                            asks (kind: options)
==================  ======================================================  ===========================
``gain``            take ``amount`` coins of a kind from the bank, what     -
                    the bank has (F4; fairy gold is the player's own, F30)
``take_stone``      take a stone of a colour from the bank (F24), or of     ``choose_colour``:
                    a colour the player chooses (``choice``, F26)           ``("colour", c)``
``draw_stones``     draw ``amount`` stones at random from the bank's bag    -
                    (F3, F42)
``pay_stones``      pay stones for points: ``any`` N, N of ``one_colour``,  ``pay_or_take`` (with
                    or one of ``each`` colour (F20-F22, F29, F40); with     ``otherwise``, F15) or
                    ``otherwise`` the player may take those effects instead ``choose_payment`` (F40)
``pay_coins``       may pay ``amount`` coins to the bank for points (F37;   ``yes_no``:
                    paid fairy gold is lost, F36)                           ``("yes",)/("no",)``
``take_from``       take coins or random stones from another player of the  ``choose_seat``:
                    user's choice (F27; a stolen fairy gold is his, F23)    ``("target", seat)``
``choose``          one of two effect lists, the user's choice              ``yes_no``:
                                                                            ``("yes",)/("no",)``
==================  ======================================================  ===========================
"""

from __future__ import annotations

import copy
import json
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import tomllib

from dragonstones_env.bounds import InputError, load_yaml, read_text_limited

from . import engine
from .cards import BY_NAME, CHARACTER_INDEX, CHARACTER_SLOTS, COLOURS, SPECIAL_DECK, STANDARD
from .engine import STOCK, Auction, ConservationError
from .powers import POWERS, RULES, Power, Powers, stone_payments

if TYPE_CHECKING:
    from .engine import Game

MAX_CUSTOM = len(CHARACTER_SLOTS) - len(CHARACTER_INDEX)  # layout v1's reserved slots (4)
MAX_COPIES = 3
COINS = ("common", "silver", "fairy", "amulets")
PAYABLE_COINS = ("common", "silver", "fairy")
PAY_TOTALS = (2, 3, 4, 5)  # the stone payments the action layout has (actions.PAYMENTS)
CONSERVATION_STATES = 200  # random states each power is tried on at load time
MAX_POINTS = 2  # no box card scores more than 2 (F22, F29)
# Sizes checked before any other work, so that a hostile deck costs little to refuse (issue #29):
# the checks below cost a few milliseconds per effect (the conservation check runs each power on
# CONSERVATION_STATES states), and a YAML document's aliases can make a small text a huge tree.
MAX_EFFECTS = 32  # effects of one card, nested ones included (the box's powers need at most 3)
MAX_NESTING = 4  # effect lists inside effect lists (choose, otherwise)
MAX_NAME = 40  # characters of a card's name
MAX_TEXT = 600  # characters of a card's rules text
MAX_DECK_TEXT = 64_000  # characters of a deck's YAML, TOML or JSON text
DECK_FORMATS = ("yaml", "toml", "json")


class CharacterError(ValueError):
    """A custom character is wrong: the message names the file, the card and the field."""


def name_key(name: str) -> str:
    """What two card names are compared as: zero-width and other format characters (Unicode's
    Cf) removed, NFKC-normalised, case-folded, whitespace stripped and collapsed. Names with the
    same key look alike at the table (``"Troll "``, ``"troll"``, ``"Wi\u200btch"``), so they clash."""
    visible = "".join(ch for ch in name if unicodedata.category(ch) != "Cf")
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())
    return " ".join(folded.split())


# The box's characters and layout v1's slots, as name_key has them: no custom card may look like one.
BOX_NAMES = {name_key(n): n for n in (*BY_NAME, *CHARACTER_SLOTS)}


# ---------------------------------------------------------------------------- primitives
def _run(g: Game, p: int, effects: Iterable[dict]) -> None:
    """Run ``effects`` in order; an effect that asks a decision runs the rest once answered."""
    effects = list(effects)
    while effects and not g.over:
        effect, rest = effects[0], effects[1:]
        (name, args), = effect.items()
        if PRIMITIVES[name](g, p, args, rest):
            return  # it asked: its resolver runs ``rest``
        effects = rest


def _then(g: Game, p: int, data: dict) -> None:
    _run(g, p, data["rest"])


def gain(g: Game, p: int, args: dict, rest: list) -> bool:
    """F4: take up to ``amount`` coins of ``coin`` from the bank (what it has)."""
    got = g.gain(p, args["coin"], args["amount"])
    g.log("took", player=p, coin=args["coin"], amount=got)
    return False


def take_stone(g: Game, p: int, args: dict, rest: list) -> bool:
    """F24 (a colour) or F26 (``choice``: a colour the bank has): ``amount`` stones from the bank."""
    if args["colour"] != "choice":
        got = sum(g.gain_stone(p, COLOURS.index(args["colour"])) for _ in range(args.get("amount", 1)))
        g.log("took_stone", player=p, colour=args["colour"], amount=got)
        return False
    options = [("colour", c) for i, c in enumerate(COLOURS) if g.bank.stones[i]]
    if not options:
        g.log("no_effect", player=p, card=_card(g), why="the bank has no stones")
        return False
    g.ask("choose_colour", p, _card(g), options, _resolve_take_stone, {"rest": rest, "amount": args.get("amount", 1)})
    return True


def _resolve_take_stone(g: Game, p: int, option: tuple, data: dict) -> None:
    got = sum(g.gain_stone(p, COLOURS.index(option[1])) for _ in range(data["amount"]))
    g.log("took_stone", player=p, colour=option[1], amount=got)
    _then(g, p, data)


def draw_stones(g: Game, p: int, args: dict, rest: list) -> bool:
    """F3, F42: ``amount`` stones drawn at random from the bank's bag (fewer if it runs out)."""
    kept = [0, 0, 0]
    for _ in range(min(args["amount"], sum(g.bank.stones))):
        c = g.draw_stone(g.bank.stones)  # draw_stone takes it out of the bag, i.e. the bank
        kept[c] += 1
    for c in range(3):
        g.players[p].stones[c] += kept[c]
    g.log("took_stones", player=p, stones=kept)
    return False


def _payments(stones: list[int], kind: str, amount: int) -> list[tuple[int, int, int]]:
    if kind == "any":
        return stone_payments(stones, amount)
    if kind == "each":
        return [(1, 1, 1)] if min(stones) >= 1 else []
    return [tuple(amount if i == c else 0 for i in range(3)) for c in range(3) if stones[c] >= amount]


def pay_stones(g: Game, p: int, args: dict, rest: list) -> bool:
    """Pay stones for points (F20-F22, F29, F40). With ``otherwise``, the user may take those
    effects instead (F15: and must where he can't pay); without, he pays if he can (F40)."""
    payments = _payments(g.players[p].stones, args["stones"], args.get("amount", 3))
    data = {"rest": rest, "points": args["points"], "otherwise": args.get("otherwise")}
    if "otherwise" in args:
        g.ask("pay_or_take", p, _card(g), [("pay", *s) for s in payments] + [("take",)], _resolve_pay, data)
        return True
    if not payments:
        g.log("no_effect", player=p, card=_card(g), why="not the stones to pay")
        return False
    g.ask("choose_payment", p, _card(g), [("pay", *s) for s in payments], _resolve_pay, data)
    return True


def _resolve_pay(g: Game, p: int, option: tuple, data: dict) -> None:
    if option[0] == "pay":
        g.pay_stones(p, option[1:])
        g.log("paid_stones", player=p, stones=list(option[1:]))
        g.score(p, data["points"])
        _then(g, p, data)
    else:
        _run(g, p, list(data["otherwise"]) + list(data["rest"]))


def pay_coins(g: Game, p: int, args: dict, rest: list) -> bool:
    """F37: may pay ``amount`` coins to the bank for points (paid fairy gold is lost, F36)."""
    if getattr(g.players[p], args["coin"]) < args["amount"]:
        g.log("no_effect", player=p, card=_card(g), why=f"not {args['amount']} {args['coin']}")
        return False
    data = {"rest": rest, **args}
    g.ask("yes_no", p, _card(g), [("yes",), ("no",)], _resolve_pay_coins, data)
    return True


def _resolve_pay_coins(g: Game, p: int, option: tuple, data: dict) -> None:
    if option == ("yes",):
        g.pay(p, data["coin"], data["amount"])
        g.log("paid", player=p, coin=data["coin"], amount=data["amount"])
        g.score(p, data["points"])
    else:
        g.log("declined", player=p, card=_card(g))
    _then(g, p, data)


def take_from(g: Game, p: int, args: dict, rest: list) -> bool:
    """F27: take up to ``amount`` of ``what`` (a coin, or ``stone``: at random) from a player
    of the user's choice. Fairy gold comes from behind the screen and is the taker's (F23)."""
    options = [("target", q) for q in range(g.num_players) if q != p]
    g.ask("choose_seat", p, _card(g), options, _resolve_take_from, {"rest": rest, **args})
    return True


def _resolve_take_from(g: Game, p: int, option: tuple, data: dict) -> None:
    q = option[1]
    victim, taker = g.players[q], g.players[p]
    what, amount = data["what"], data["amount"]
    if what == "stone":
        got = [0, 0, 0]
        for _ in range(min(amount, sum(victim.stones))):
            c = g.draw_stone(victim.stones)  # out of the victim's stones, at random
            got[c] += 1
        for c in range(3):
            taker.stones[c] += got[c]
        g.log("stole", player=p, victim=q, what="stones", stones=got)
    else:
        n = min(amount, getattr(victim, what))
        setattr(victim, what, getattr(victim, what) - n)
        setattr(taker, what, getattr(taker, what) + n)
        g.log("stole", player=p, victim=q, what=what, amount=n)
    _then(g, p, data)


def choose(g: Game, p: int, args: list, rest: list) -> bool:
    """Either of two effect lists, the user's pick (``yes`` the first, ``no`` the second)."""
    g.ask("yes_no", p, _card(g), [("yes",), ("no",)], _resolve_choose, {"rest": rest, "branches": args})
    return True


def _resolve_choose(g: Game, p: int, option: tuple, data: dict) -> None:
    branch = data["branches"][0 if option == ("yes",) else 1]
    _run(g, p, list(branch) + list(data["rest"]))


def _card(g: Game) -> str | None:
    return None if g.power is None else g.power.card


PRIMITIVES: dict[str, Callable[[Any, int, Any, list], bool]] = {
    "gain": gain,
    "take_stone": take_stone,
    "draw_stones": draw_stones,
    "pay_stones": pay_stones,
    "pay_coins": pay_coins,
    "take_from": take_from,
    "choose": choose,
}


# ---------------------------------------------------------------------------- the schema
def _int(where: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CharacterError(f"{where}: must be an int, got {value!r}")
    if not lo <= value <= hi:
        raise CharacterError(f"{where}: impossible amount {value} (must be {lo}..{hi})")
    return value


def _one_of(where: str, value: Any, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise CharacterError(f"{where}: {value!r} is not one of {list(allowed)}")
    return value


def _fields(where: str, args: Any, required: set[str], optional: set[str] = frozenset()) -> dict:
    if not isinstance(args, dict):
        raise CharacterError(f"{where}: must be a mapping with {sorted(required | optional)}")
    missing, extra = required - set(args), set(args) - required - set(optional)
    if missing:
        raise CharacterError(f"{where}: missing field(s) {sorted(missing)}")
    if extra:
        raise CharacterError(f"{where}: unknown field(s) {sorted(extra)}")
    return args


def check_size(where: str, effects: Any, depth: int = 0, budget: int = MAX_EFFECTS) -> int:
    """Refuse a power of more than :data:`MAX_EFFECTS` effects (nested ones included) or nested
    deeper than :data:`MAX_NESTING`, before anything else looks at it: the count stops at the
    limit, so a card of any size (or a YAML alias bomb) costs at most ``MAX_EFFECTS`` steps.
    Returns the effects counted; a malformed shape is left to :func:`check_effects` to name."""
    if depth > MAX_NESTING:
        raise CharacterError(f"{where}: effects nested more than {MAX_NESTING} deep")
    if not isinstance(effects, list):
        return 0
    if len(effects) > budget:
        raise CharacterError(f"{where}: more than {MAX_EFFECTS} effects in one card (nested ones included)")
    count = 0
    for i, effect in enumerate(effects):
        count += 1
        if not (isinstance(effect, dict) and len(effect) == 1):
            continue
        (name, args), = effect.items()
        branches = args if name == "choose" and isinstance(args, list) else \
            [args.get("otherwise")] if isinstance(args, dict) and "otherwise" in args else []
        for k, branch in enumerate(branches[:2]):
            count += check_size(f"{where}[{i}].{name}[{k}]", branch, depth + 1, budget - count)
        if count > budget:
            raise CharacterError(f"{where}: more than {MAX_EFFECTS} effects in one card (nested ones included)")
    return count


def check_effects(where: str, effects: Any) -> list[dict]:
    """Check a list of effects against the schema; returns it as plain dicts."""
    if not isinstance(effects, list) or not effects:
        raise CharacterError(f"{where}: must be a non-empty list of effects")
    out = []
    for i, effect in enumerate(effects):
        at = f"{where}[{i}]"
        if not isinstance(effect, dict) or len(effect) != 1:
            raise CharacterError(f"{at}: an effect is a mapping with one key, one of {sorted(PRIMITIVES)}")
        (name, args), = effect.items()
        at = f"{at}.{name}"
        if name not in PRIMITIVES:
            raise CharacterError(f"{at}: unknown effect {name!r} (known: {sorted(PRIMITIVES)})")
        out.append({name: _CHECKS[name](at, args)})
    return out


def _check_gain(at: str, args: Any) -> dict:
    _fields(at, args, {"coin", "amount"})
    coin = _one_of(f"{at}.coin", args["coin"], COINS)
    return {"coin": coin, "amount": _int(f"{at}.amount", args["amount"], 1, STOCK[coin])}


def _check_take_stone(at: str, args: Any) -> dict:
    _fields(at, args, {"colour"}, {"amount"})
    out = {"colour": _one_of(f"{at}.colour", args["colour"], (*COLOURS, "choice"))}
    if "amount" in args:
        out["amount"] = _int(f"{at}.amount", args["amount"], 1, STOCK["stones"])
    return out


def _check_draw_stones(at: str, args: Any) -> dict:
    _fields(at, args, {"amount"})
    return {"amount": _int(f"{at}.amount", args["amount"], 1, 3 * STOCK["stones"])}


def _check_pay_stones(at: str, args: Any) -> dict:
    _fields(at, args, {"stones", "points"}, {"amount", "otherwise"})
    kind = _one_of(f"{at}.stones", args["stones"], ("any", "one_colour", "each"))
    out: dict[str, Any] = {"stones": kind, "points": _int(f"{at}.points", args["points"], 1, MAX_POINTS)}
    if kind == "each":
        if "amount" in args:
            raise CharacterError(f"{at}.amount: 'each' pays one stone of each colour, no amount")
    else:
        if "amount" not in args:
            raise CharacterError(f"{at}: missing field(s) ['amount']")
        # The action layout has the payments of 2 to 5 stones (actions.PAYMENTS): no more.
        out["amount"] = _int(f"{at}.amount", args["amount"], PAY_TOTALS[0], PAY_TOTALS[-1])
    if "otherwise" in args:
        out["otherwise"] = check_effects(f"{at}.otherwise", args["otherwise"])
    return out


def _check_pay_coins(at: str, args: Any) -> dict:
    _fields(at, args, {"coin", "amount", "points"})
    coin = _one_of(f"{at}.coin", args["coin"], PAYABLE_COINS)
    return {"coin": coin, "amount": _int(f"{at}.amount", args["amount"], 1, STOCK[coin]),
            "points": _int(f"{at}.points", args["points"], 1, MAX_POINTS)}


def _check_take_from(at: str, args: Any) -> dict:
    _fields(at, args, {"what", "amount"})
    what = _one_of(f"{at}.what", args["what"], (*PAYABLE_COINS, "stone"))
    hi = 3 * STOCK["stones"] if what == "stone" else STOCK[what]
    return {"what": what, "amount": _int(f"{at}.amount", args["amount"], 1, hi)}


def _check_choose(at: str, args: Any) -> list:
    if not isinstance(args, list) or len(args) != 2:
        raise CharacterError(f"{at}: must be a list of two effect lists (the yes/no actions)")
    return [check_effects(f"{at}[{i}]", branch) for i, branch in enumerate(args)]


_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "gain": _check_gain,
    "take_stone": _check_take_stone,
    "draw_stones": _check_draw_stones,
    "pay_stones": _check_pay_stones,
    "pay_coins": _check_pay_coins,
    "take_from": _check_take_from,
    "choose": _check_choose,
}


# ---------------------------------------------------------------------------- characters
@dataclass(frozen=True)
class Custom:
    """One custom character: data (``effects``) or Python (``function``)."""

    name: str
    copies: int
    text: str
    effects: tuple | None = None  # data: the checked effects
    function: Power | None = field(default=None, compare=False)  # Python: the registered power
    value_hint: float | None = None  # Python: what the bots think winning it is worth (points)
    source: str = "<python>"

    @property
    def power(self) -> Power:
        if self.function is not None:
            return self.function
        effects = self.effects

        def data_power(g: Game, p: int, auction: Auction) -> None:
            _run(g, p, copy.deepcopy(list(effects)))

        data_power.__name__ = f"custom_{self.name}"
        return data_power

    def to_dict(self) -> dict[str, Any]:
        """As carried by the record: a data card whole, a Python card by name."""
        if self.function is not None:
            return {"name": self.name, "copies": self.copies, "text": self.text, "python": True}
        return {"name": self.name, "copies": self.copies, "text": self.text, "effects": list(self.effects)}


PYTHON_CHARACTERS: dict[str, Custom] = {}


def character(name: str, copies: int = 1, text: str = "", value_hint: float | None = None,
              check: bool = True) -> Callable[[Power], Power]:
    """Register a Python power ``power(game, player, auction)`` as a custom character.

    It is validated (name, copies, conservation) at once; the function is returned unchanged.
    """

    def register(function: Power) -> Power:
        where = f"{function.__module__}.{function.__qualname__}"
        card = Custom(name, copies, text, function=function, value_hint=value_hint, source=where)
        validate(card, conservation=check)
        PYTHON_CHARACTERS[name] = card
        return function

    return register


def validate(card: Custom, conservation: bool = True) -> Custom:
    """The one validation of data and Python cards (raises :class:`CharacterError`)."""
    where = f"{card.source}: character {card.name!r}"
    if not isinstance(card.name, str) or not name_key(card.name):
        raise CharacterError(f"{where}.name: a non-empty string")
    if name_key(card.name) in BOX_NAMES:
        raise CharacterError(f"{where}.name: clashes with {BOX_NAMES[name_key(card.name)]!r}, a character of the box "
                             "(or a layout slot); names are compared without case, spacing or invisible characters")
    _int(f"{where}.copies", card.copies, 1, MAX_COPIES)
    if not isinstance(card.text, str):
        raise CharacterError(f"{where}.text: a string")
    if card.effects is not None:
        check_effects(f"{where}.effects", list(card.effects))
    if conservation:
        check_conservation(card)
    return card


def card_from_dict(d: Any, source: str) -> Custom:
    """A data card from its mapping (``name``, ``copies``, ``text``, ``effects``)."""
    if not isinstance(d, dict):
        raise CharacterError(f"{source}: a character is a mapping")
    name = d.get("name", "?")
    if isinstance(name, str) and len(name) > MAX_NAME:
        raise CharacterError(f"{source}: a character's name has at most {MAX_NAME} characters, got {len(name)}")
    where = f"{source}: character {name!r}"
    _fields(where, d, {"name", "effects"}, {"copies", "text", "python"})
    if d.get("python"):
        raise CharacterError(f"{where}: a Python character is registered with @character, not in a file")
    if isinstance(d.get("text"), str) and len(d["text"]) > MAX_TEXT:
        raise CharacterError(f"{where}.text: at most {MAX_TEXT} characters, got {len(d['text'])}")
    check_size(f"{where}.effects", d["effects"])
    effects = check_effects(f"{where}.effects", d["effects"])
    card = Custom(name, d.get("copies", 1), d.get("text", ""), effects=tuple(effects), source=source)
    return validate(card)


def parse_text(text: Any, fmt: Any, source: str) -> list[Any]:
    """The ``characters`` list of a deck's text in ``fmt`` (``yaml``, ``toml`` or ``json``), not yet
    checked card by card (:func:`card_from_dict` does that); its size is checked first."""
    if fmt not in DECK_FORMATS:
        raise CharacterError(f"{source}: the format must be one of {list(DECK_FORMATS)}, got {str(fmt)[:40]!r}")
    if not isinstance(text, str):
        raise CharacterError(f"{source}: the deck's text must be a string")
    if len(text) > MAX_DECK_TEXT:
        raise CharacterError(f"{source}: the deck's text has {len(text)} characters; at most {MAX_DECK_TEXT}")
    try:
        if fmt == "toml":
            doc = tomllib.loads(text)
        elif fmt == "json":
            doc = json.loads(text)
        else:
            doc = load_yaml(text, source)  # no aliases (a bomb of them), duplicate keys refused
    except InputError as err:
        raise CharacterError(str(err)) from None
    except Exception as err:  # the parser's own message (RecursionError included), named by source
        raise CharacterError(f"{source}: not valid {fmt.upper()}: {str(err)[:300]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("characters"), list):
        raise CharacterError(f"{source}: must have a 'characters' list")
    cards = doc["characters"]
    if len(cards) > MAX_CUSTOM:  # before any card is checked
        raise CharacterError(f"{source}: at most {MAX_CUSTOM} custom characters (layout v1's reserved slots), "
                             f"got {len(cards)}")
    return cards


def load_file(path: str | Path) -> list[Custom]:
    """The characters of a YAML (``.yaml``/``.yml``) or TOML (``.toml``) file: at most
    ``FILE_BYTES["deck"]`` bytes, read before any parsing; YAML without aliases."""
    path = Path(path)
    try:
        text = read_text_limited(path, "deck", "characters")
    except OSError as err:
        raise CharacterError(f"{path}: cannot read it ({err.strerror})") from None
    except InputError as err:
        raise CharacterError(str(err)) from None
    fmt = "toml" if path.suffix == ".toml" else "yaml"
    return [card_from_dict(d, str(path)) for d in parse_text(text, fmt, str(path))]


# ---------------------------------------------------------------------------- conservation
def _random_state(rng: np.random.Generator) -> Game:
    """A game at a random table state: holdings moved at random between bank and players."""
    n = int(rng.integers(3, 7))
    g = engine.Game(n, seed=int(rng.integers(2**31)))
    g.pending = None
    for p, pl in enumerate(g.players):
        for coin in ("fairy", "common", "silver", "amulets"):
            g.gain(p, coin, int(rng.integers(0, 6)))
        for c in range(3):
            for _ in range(int(rng.integers(0, 4))):
                g.gain_stone(p, c)
        pl.score = int(rng.integers(0, 3))
    return g


def check_conservation(card: Custom, states: int = CONSERVATION_STATES, seed: int = 16) -> None:
    """Use the power on random states, answering its decisions at random: no coin or stone
    may be created or destroyed, and it may not raise."""
    rng = np.random.default_rng(seed)
    power = card.power
    for i in range(states):
        g = _random_state(rng)
        p = int(rng.integers(g.num_players))
        auction = Auction(card.name, bids=[[0, 0, 0, 0]] * g.num_players, values=[0] * g.num_players,
                          outcome="won", winner=p)
        g.power = engine.PowerUse(card.name, p, auction)
        before = g.totals()
        try:
            power(g, p, auction)
            for _ in range(1000):  # a decision per step; the power is done when none is pending
                pending = g.pending
                if pending is None or pending.handler is None:
                    break
                options = pending.options
                g.pending = None
                pending.handler(g, pending.decision.player, options[int(rng.integers(len(options)))], pending.data)
        except CharacterError:
            raise
        except Exception as err:
            raise CharacterError(f"{card.source}: character {card.name!r}: its power raised "
                                 f"{type(err).__name__}: {err} (conservation check, state {i})") from err
        after = g.totals()
        if after != before:
            diff = {w: a - b for w, a, b in zip(engine.TOTALS, after, before, strict=True) if a != b}
            raise CharacterError(f"{card.source}: character {card.name!r}: its power creates or destroys "
                                 f"coins or stones {diff} (conservation check, state {i})")


# ---------------------------------------------------------------------------- the deck
SPECIAL_KINDS = tuple(c.name for c in BY_NAME.values() if not c.standard)


@dataclass(frozen=True)
class Deck:
    """The special pile of a game: the box's specials less ``exclude``, plus ``custom`` cards.

    Gives the engine its special pile, its powers table and each card's layout slot.
    """

    custom: tuple[Custom, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.custom) > MAX_CUSTOM:
            raise CharacterError(f"at most {MAX_CUSTOM} custom characters (layout v1's reserved slots), "
                                 f"got {len(self.custom)}")
        keys = [name_key(c.name) for c in self.custom]
        dup = sorted({c.name for c, k in zip(self.custom, keys, strict=True) if keys.count(k) > 1})
        if dup:
            raise CharacterError(f"custom character(s) {dup} defined twice (names are compared without case, "
                                 "spacing or invisible characters)")
        for name in self.exclude:
            if name not in SPECIAL_KINDS:
                why = "a standard character is in every turn (F7)" if name in STANDARD else "no such special"
                raise CharacterError(f"exclude: {name!r} cannot be excluded ({why}; specials: {list(SPECIAL_KINDS)})")
        if len(self.specials) < 3:  # two a turn (F7), and a held Doppelganger is in no pile
            raise CharacterError(f"the special pile needs at least 3 cards, got {len(self.specials)}")

    @cached_property
    def specials(self) -> tuple[str, ...]:
        kept = tuple(name for name in SPECIAL_DECK if name not in self.exclude)
        return kept + tuple(c.name for c in self.custom for _ in range(c.copies))

    @cached_property
    def python_cards(self) -> frozenset[str]:
        """The custom cards written in Python: the engine checks F2 after each use of one."""
        return frozenset(c.name for c in self.custom if c.function is not None)

    @cached_property
    def slots(self) -> dict[str, int]:
        """The layout slot of every card: the box's own, then custom_1.. for the custom cards."""
        base = len(CHARACTER_INDEX)
        return {**CHARACTER_INDEX, **{c.name: base + i for i, c in enumerate(self.custom)}}

    @cached_property
    def powers(self) -> Powers:
        table = {name: f for name, f in POWERS.items() if name not in self.exclude}
        table.update({c.name: c.power for c in self.custom})
        return Powers(table, on_win=RULES.on_win)

    def slot_name(self, name: str) -> str:
        """The action layout's label for a card (a custom card: its ``custom_k`` slot)."""
        return CHARACTER_SLOTS[self.slots[name]]

    def card_name(self, label: str) -> str:
        """The card behind an action layout label (inverse of :meth:`slot_name`)."""
        for c in self.custom:
            if self.slot_name(c.name) == label:
                return c.name
        return label

    def to_dict(self) -> dict[str, Any]:
        return {"custom": [c.to_dict() for c in self.custom], "exclude": list(self.exclude)}

    @classmethod
    def from_dict(cls, d: Any) -> Deck:
        """The deck of a record or state; a card this process does not know is refused, and so is
        any other shape than :meth:`to_dict`'s (:class:`CharacterError`; :func:`replay` reports it
        as a ``ReplayError`` of the start event)."""
        if not isinstance(d, dict):
            raise CharacterError(f"deck: a mapping with 'custom' and 'exclude', got {_short(d)}")
        extra = sorted(map(str, set(d) - {"custom", "exclude"}))
        if extra:
            raise CharacterError(f"deck: unknown field(s) {_short(extra)}; a deck has 'custom' and 'exclude'")
        custom, exclude = d.get("custom", []), d.get("exclude", [])
        if not isinstance(custom, (list, tuple)) or not all(isinstance(c, dict) for c in custom):
            raise CharacterError(f"deck.custom: a list of card mappings, got {_short(custom)}")
        if not isinstance(exclude, (list, tuple)) or not all(isinstance(x, str) for x in exclude):
            raise CharacterError(f"deck.exclude: a list of special characters' names, got {_short(exclude)}")
        cards = []
        for c in custom:
            if c.get("python"):
                name = c.get("name")
                known = PYTHON_CHARACTERS.get(name) if isinstance(name, str) else None
                if known is None:
                    raise CharacterError(f"unknown card {_short(name)}: a Python character; import the module "
                                         "that registers it with @character before replaying")
                cards.append(known)
            else:
                cards.append(card_from_dict(c, "the record"))
        return cls(tuple(cards), tuple(exclude))


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def make_deck(characters: Any = None, exclude: Iterable[str] = ()) -> Deck | None:
    """The deck of the env options ``characters`` and ``exclude``; None for the box's deck.

    ``characters``: a file path (YAML or TOML), a list of card mappings or :class:`Custom`
    cards, or names of registered Python characters.
    """
    exclude = tuple(exclude or ())
    if characters is None and not exclude:
        return None
    cards: list[Custom] = []
    if isinstance(characters, (str, Path)) and str(characters) not in PYTHON_CHARACTERS:
        cards = load_file(characters)
    else:
        items = [] if characters is None else [characters] if isinstance(characters, str) else list(characters)
        if len(items) > MAX_CUSTOM:  # before any card is checked
            raise CharacterError(f"at most {MAX_CUSTOM} custom characters (layout v1's reserved slots), "
                                 f"got {len(items)}")
        for item in items:
            if isinstance(item, Custom):
                cards.append(item)
            elif isinstance(item, str):
                if item not in PYTHON_CHARACTERS:
                    raise CharacterError(f"characters: {item!r} is neither a file nor a registered Python character")
                cards.append(PYTHON_CHARACTERS[item])
            elif isinstance(item, dict):
                cards.append(card_from_dict(item, "characters"))
            else:
                raise CharacterError(f"characters: {item!r} is not a card")
    return Deck(tuple(cards), exclude)


def replay(record: list[dict[str, Any]]) -> Game:
    """:func:`engine.replay` that also rebuilds a custom deck from the record's start event."""
    return engine.replay(record, load_deck=Deck.from_dict)


def describe(deck: Deck | None) -> str:
    """One line per custom card, for the text render."""
    if deck is None:
        return ""
    return "; ".join(f"{c.name} x{c.copies}: {c.text}" for c in deck.custom) + (
        f" (without {', '.join(deck.exclude)})" if deck.exclude else "")


__all__ = [
    "PRIMITIVES",
    "CharacterError",
    "ConservationError",
    "Custom",
    "Deck",
    "character",
    "load_file",
    "make_deck",
    "name_key",
    "parse_text",
    "replay",
    "validate",
]
