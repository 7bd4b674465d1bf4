"""What the API shows and accepts, a module per resource. Read serializers present rows; request
serializers check the shape of a write before a service sees it (the service still owns the rules).
URLs follow GitHub's convention: `url` is the API resource, `html_url` the page on the site. Import
each serializer from the module that defines it."""
