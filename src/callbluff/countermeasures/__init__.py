"""The countermeasures wing: what a user puts in front of a scorer or adds to its training, in two floors.

The floor below the engine is :mod:`callbluff.defenses` (it generates nothing, so a target can wrap a scorer in it
and the engine can run it): the feature variants (Ding et al. 2020, Sec. 5.1), the answer filters (Sec. 5.4, ours,
and the injection pre-filter for LLM graders) with :class:`~callbluff.defenses.filtered.FilteredTarget`, and the
trade-off metrics (Sec. 5.3). A chat grader's own defences are target options
(:mod:`callbluff.targets.grader_defences`).

This package is the floor above the engine: the countermeasures that *generate* adversarial inputs through the
engine's one generation path (:func:`callbluff.engine.generate.generate`, so the bytes do not depend on the
executor):

* :mod:`~callbluff.countermeasures.battery` -- the generated answers every content filter learns from and is
  measured on (Ding et al. 2020, Sec. 5.3-5.4), and the benign real-answer noise;
* :mod:`~callbluff.countermeasures.adversarial_training` -- short answers: generated answers labelled wrong added
  to the training data (Ding et al. 2020, Sec. 5.2);
* :mod:`~callbluff.countermeasures.augment` -- essays: adversarial essays scored original minus the attack's
  penalty (Kumar et al. 2020, Sec. 4.2).

Commands: ``callbluff filter fit|apply`` (:mod:`callbluff.cli.filter`, the battery) and ``callbluff augment``
(:mod:`callbluff.cli.train`); the adversarial training set is a Python function
(:func:`~callbluff.countermeasures.adversarial_training.adversarial_training_set`). docs/findings/content.md
section 5 measures them.
"""
