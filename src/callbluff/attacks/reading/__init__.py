"""Reading comprehension adversaries of Jia & Liang (2017): AddSent, AddOneSent (Sec. 3.1-3.2) and AddAny,
AddCommon (Sec. 3.3), each a registered attack that adds distracting text to the paragraph."""

from callbluff.attacks.reading.addany import AddAny, AddAnyParams, AddCommon, common_words
from callbluff.attacks.reading.addsent import (
    AddOneSent,
    AddSent,
    AddSentParams,
    Candidate,
    CandidateParams,
    candidates,
    candidates_many,
    prefetch_candidates,
)
from callbluff.attacks.reading.declarative import to_declarative, wh_phrase
from callbluff.attacks.reading.grammar import grammar_problems, is_grammatical

__all__ = [
    "AddAny", "AddAnyParams", "AddCommon", "AddOneSent", "AddSent", "AddSentParams", "Candidate", "CandidateParams",
    "candidates", "candidates_many", "common_words", "grammar_problems", "is_grammatical", "prefetch_candidates",
    "to_declarative", "wh_phrase",
]
