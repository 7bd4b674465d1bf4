"""The HTML site: views that load, call a page builder or a service, and render. An interface:
it imports the domain and presentation, and nothing imports it but the root URLconf."""
