"""Essay-scoring adversaries of Kumar et al. 2020, "Calling Out Bluff" (AES, task ``essay``).

One module per family of Sec. 3.2-3.4: ``add`` (AddWikiRelated ... AddRC), ``delete`` (DelStart, DelEnd,
DelRand), ``modify`` (ModGrammar, ModFluency, ModLexicon, ShuffleSent), ``generate`` (BabelGen). Importing
this package registers them; each family module adds its own import line below.
"""

from callbluff.attacks.essay.add import (
    AddLies,
    AddRC,
    AddSong,
    AddSpeech,
    AddTruth,
    AddWikiRelated,
    AddWikiUnrelated,
    RepeatSent,
)
from callbluff.attacks.essay.common import KUMAR
from callbluff.attacks.essay.delete import DelEnd, DelRand, DelStart
from callbluff.attacks.essay.generate import BabelGen
from callbluff.attacks.essay.modify import ModFluency, ModGrammar, ModLexicon, ShuffleSent, ShuffleSentParams

__all__ = [
    "KUMAR", "AddLies", "AddRC", "AddSong", "AddSpeech", "AddTruth", "AddWikiRelated", "AddWikiUnrelated",
    "RepeatSent", "BabelGen", "DelEnd", "DelRand", "DelStart", "ModFluency", "ModGrammar", "ModLexicon", "ShuffleSent",
    "ShuffleSentParams"]
