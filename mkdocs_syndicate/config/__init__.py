"""Configuration: from what a user wrote to what a run is handed, typed end to end. Importing the
package loads nothing; each module is imported by what needs it.

    defaults     allowed values and defaults of the site-level settings
    schema       the plugin's settings schema (mkdocs.yml, properdocs.yml, syndicate.yml)
    standalone   syndicate.yml: the same schema for a site MkDocs does not build
    durations    duration settings and their documented ranges
    channels     `channels:` validated per type, from each type's declared settings
    run          Options: what the engine is handed; parse_options validates the channels
    site         from a loaded config to Options; finding and loading the site's config

Every ConfigError carries the setting it names (ConfigError.setting) and is placed in its file
(`mkdocs.yml: plugins.syndicate.<setting>`) only where the file is known.
"""
