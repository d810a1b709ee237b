"""Write the demo dataset: short news headlines in five topics with planted label errors.

The project writes this data itself (nothing is downloaded): headlines are built from
per-topic templates and word lists with a fixed seed, then 5% of the labels are changed
to another topic. The given labels go to ``news_headlines.csv``; the true labels and the
``is_error`` flag go to ``news_headlines_truth.csv``.

    python examples/make_demo_data.py            # (re)write both files
    python examples/make_demo_data.py --check    # write them if missing, else verify them
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE / "news_headlines.csv"
TRUTH = HERE / "news_headlines_truth.csv"
N_ITEMS = 1200
ERROR_RATE = 0.05

TOPICS: dict[str, dict[str, list[str]]] = {
    "sports": {
        "who": ["United", "the Lakers", "Serena Williams", "the national team", "City",
                "the champions", "a rookie striker", "the Red Sox", "the Olympic squad",
                "the home side", "the captain", "the league leaders"],
        "did": ["beat", "stun", "draw with", "crush", "edge past", "lose to", "thrash",
                "hold off", "knock out", "come back against"],
        "what": ["in the cup final", "after extra time", "in a penalty shootout",
                 "to reach the semifinals", "at the home stadium", "in the derby",
                 "to top the table", "in the season opener", "at Wimbledon",
                 "in the title race"],
    },
    "business": {
        "who": ["Shares of Acme", "The central bank", "Oil prices", "A tech giant",
                "Retail sales", "The stock market", "A major carmaker", "Investors",
                "The bond market", "A struggling airline", "Startup founders",
                "The quarterly report"],
        "did": ["rise", "fall", "surge", "slump", "rally", "tumble", "stall", "rebound",
                "beat forecasts", "miss estimates"],
        "what": ["after earnings", "as inflation cools", "on merger talks",
                 "amid recession fears", "after the rate decision", "on strong demand",
                 "as profits jump", "ahead of the IPO", "after layoffs",
                 "on supply chain worries"],
    },
    "science": {
        "who": ["Astronomers", "Researchers", "A new study", "Biologists", "Physicists",
                "NASA scientists", "Climate scientists", "Geneticists", "A space probe",
                "Chemists", "Neuroscientists", "Marine biologists"],
        "did": ["discover", "detect", "map", "observe", "identify", "measure", "sequence",
                "photograph", "simulate", "confirm"],
        "what": ["a distant exoplanet", "a new species of frog", "gravitational waves",
                 "the genome of an ancient plant", "a black hole merger",
                 "microbes in deep ocean vents", "a comet's icy core",
                 "proteins that slow ageing", "water on the moon",
                 "a fossil of a feathered dinosaur"],
    },
    "politics": {
        "who": ["The senate", "The prime minister", "Lawmakers", "The governor",
                "Opposition leaders", "The president", "Parliament", "The city council",
                "Voters", "The foreign minister", "The coalition", "Campaign officials"],
        "did": ["approve", "reject", "debate", "block", "pass", "veto", "endorse",
                "challenge", "delay", "announce"],
        "what": ["the budget bill", "a new election law", "the immigration reform",
                 "sanctions on rivals", "a vote of no confidence", "the healthcare plan",
                 "a peace treaty", "tax cuts for families", "the defence spending bill",
                 "term limits"],
    },
    "food": {
        "who": ["A celebrity chef", "The bakery", "Home cooks", "A street food stall",
                "The new bistro", "Food critics", "A family restaurant", "Pastry chefs",
                "The farmers market", "A vegan cafe", "Wine makers", "The pizzeria"],
        "did": ["unveil", "perfect", "serve", "reinvent", "praise", "share", "bake",
                "season", "grill", "taste"],
        "what": ["a spicy noodle recipe", "sourdough bread", "a summer salad",
                 "slow-cooked ramen", "a chocolate tart", "seasonal tasting menu",
                 "wood-fired pizza", "a classic lasagna", "fresh oysters",
                 "a vegetarian curry"],
    },
}

# Errors people make are not uniform: a mislabelled headline usually lands in a related topic.
CONFUSABLE = {"sports": "business", "business": "politics", "science": "food",
              "politics": "business", "food": "science"}


def build(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    topics = list(TOPICS)
    rows, seen = [], set()
    while len(rows) < N_ITEMS:
        topic = topics[len(rows) % len(topics)]
        parts = TOPICS[topic]
        headline = " ".join(rng.choice(parts[k]) for k in ("who", "did", "what"))
        if headline in seen:
            continue
        seen.add(headline)
        rows.append((headline, topic))
    order = rng.permutation(len(rows))
    frame = pd.DataFrame([rows[i] for i in order], columns=["text", "true_label"])
    frame.insert(0, "id", [f"h{i:04d}" for i in range(len(frame))])
    n_errors = round(ERROR_RATE * len(frame))
    wrong = rng.choice(len(frame), size=n_errors, replace=False)
    given = frame["true_label"].to_numpy(dtype=object).copy()
    for i in wrong:
        if rng.random() < 0.7:
            given[i] = CONFUSABLE[given[i]]
        else:
            given[i] = rng.choice([t for t in topics if t != given[i]])
    frame["label"] = given
    frame["is_error"] = frame["label"] != frame["true_label"]
    return frame[["id", "text", "label"]], frame[["id", "true_label", "is_error"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write the files if missing, else verify they match the generator")
    args = parser.parse_args(argv)
    data, truth = build()
    if args.check and DATA.exists() and TRUTH.exists():
        same = (pd.read_csv(DATA).equals(data) and pd.read_csv(TRUTH).equals(truth))
        if not same:
            print("examples/: the shipped demo files differ from the generator; "
                  "run `python examples/make_demo_data.py` to rewrite them", file=sys.stderr)
            return 1
        return 0
    data.to_csv(DATA, index=False)
    truth.to_csv(TRUTH, index=False)
    print(f"wrote {DATA.name} ({len(data)} headlines, {int(truth['is_error'].sum())} planted "
          f"errors) and {TRUTH.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
