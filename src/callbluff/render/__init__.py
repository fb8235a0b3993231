"""Rendering primitives the report page and the task descriptors share: number and text formatting
(:mod:`~callbluff.render.text`), the papers' table shapes (:mod:`~callbluff.render.tables`), inline SVG plots
(:mod:`~callbluff.render.plots`) and paper-shaped views of metric rows (:mod:`~callbluff.render.views`). They
sit below :mod:`callbluff.tasks` (whose descriptors build their report views from them) and the report page
(:mod:`callbluff.report`), which imports the task descriptors."""
