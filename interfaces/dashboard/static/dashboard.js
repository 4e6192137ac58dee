// Cognitive Memory dashboard: draws the graph page with cytoscape. Everything else works without
// this file. Labels are set as cytoscape data (drawn on a canvas), never as HTML.
"use strict";

function drawGraph(container) {
  if (!window.cytoscape || container.dataset.drawn) { return; }
  container.dataset.drawn = "1";
  fetch(container.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (response) { return response.json(); })
    .then(function (graph) {
      var elements = graph.nodes.map(function (node) { return { group: "nodes", data: node }; })
        .concat(graph.edges.map(function (edge) { return { group: "edges", data: edge }; }));
      var cy = window.cytoscape({
        container: container,
        elements: elements,
        layout: { name: "breadthfirst", roots: graph.nodes.filter(function (n) { return n.kind === "centre"; }).map(function (n) { return n.id; }), spacingFactor: 1.1, animate: false },
        wheelSensitivity: 0.3,
        style: [
          { selector: "node", style: { "label": "data(label)", "font-size": 10, "color": "#1d232b",
            "text-wrap": "wrap", "text-max-width": 140, "text-valign": "bottom", "text-margin-y": 4,
            "background-color": "#8c99ab", "width": 18, "height": 18 } },
          { selector: "node[kind = 'centre']", style: { "background-color": "#2f5fd0", "width": 26, "height": 26, "font-weight": "bold" } },
          { selector: "node[kind = 'bridge']", style: { "background-color": "#c2410c", "shape": "diamond", "width": 24, "height": 24 } },
          { selector: "edge", style: { "label": "data(relation)", "font-size": 9, "color": "#5b3a9a",
            "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "#b7a6dc",
            "target-arrow-color": "#b7a6dc", "width": 1.5, "text-background-color": "#fff",
            "text-background-opacity": 0.9, "text-background-padding": 2 } }
        ]
      });
      cy.on("tap", "node", function (event) {
        window.location.assign("/memories/" + encodeURIComponent(event.target.id()));
      });
      container.dataset.nodes = String(cy.nodes().length);
      window.dashboardGraph = cy;
    })
    .catch(function () { container.dataset.failed = "1"; });
}

function start() {
  var container = document.getElementById("graph");
  if (container) { drawGraph(container); }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start);
} else {
  start();
}
